import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { makeFifo, settlesWithoutWaitingOn } from '@switchyard/test-support';
import { z } from 'zod';
import { tempRepo } from '../../test/gitFixture.js';
import { makeWorkflow } from '../../test/helpers.js';
import { ArtifactStore } from '../git/artifactStore.js';
import { GitRepository } from '../git/gitRepository.js';
import {
  arg,
  argumentsJsonSchema,
  BUILTIN_SUBCOMMANDS,
  EXIT_CODES,
  runSubcommand,
  SUBCOMMAND_CATEGORIES,
  SubcommandAuditLog,
  SubcommandRegistry,
  sanitizeArgs,
} from './index.js';
import type { SubcommandContext } from './registry.js';

const run = promisify(execFile);
const registry = new SubcommandRegistry(BUILTIN_SUBCOMMANDS);
const auditChainBin = fileURLToPath(new URL('../../../audit-chain/src/bin.ts', import.meta.url));

const DOCUMENTED_DEFAULTS: Record<string, Record<string, unknown>> = {
  'branch:create': { name: undefined, base: 'main', checkout: false },
  'branch:checkout': { name: undefined, create: false },
  'branch:delete': { name: undefined, force: false, remote: undefined },
  'branch:list': { pattern: undefined, remote: false },
  'commit:create': { message: undefined, all: true, files: [], author: undefined, allow_empty: false },
  'commit:amend': { message: undefined, all: true, allow_empty: false },
  'commit:fixup': { target: undefined, message: undefined, all: true },
  'commit:rebase': { onto: 'main', autosquash: true },
  'diff:show': { from: 'HEAD~1', to: 'HEAD', stat: false, unified: 3, paths: [] },
  'diff:stat': { from: 'HEAD~1', to: 'HEAD', paths: [] },
  'stash:push': { message: undefined, include_untracked: false },
  'stash:pop': { index: 0 },
  'stash:list': {},
  'worktree:add': { path: undefined, branch: undefined, feature_slug: undefined, wp_id: undefined, base: 'main' },
  'worktree:remove': { path: undefined, force: false },
  'worktree:list': {},
  'artifact:write': { feature_slug: undefined, relative_path: undefined, content: undefined, from_file: undefined },
  'artifact:read': { feature_slug: undefined, relative_path: undefined },
  'artifact:hash': { feature_slug: undefined, relative_path: undefined },
  'governance:check': { feature_slug: undefined, transition: undefined, wp: undefined, verbose: false },
  'governance:enforce': { feature_slug: undefined, rule: undefined, action: undefined },
  'audit:log': { feature_slug: undefined, actor: undefined, since: undefined, limit: 50, output: undefined },
  'audit:query': { feature_slug: undefined, where: undefined, group_by: undefined, order_by: undefined, limit: undefined },
  // Optional anchors added later (issue 24): new arguments are optional, as the registry's versioning says.
  'audit:verify': { feature_slug: undefined, checkpoint_file: undefined, public_key: undefined, trusted_state: undefined },
};

test('more than 40 subcommands in 8 categories; the 24 documented ones take exactly their documented arguments and defaults', () => {
  assert.ok(registry.list().length > 40, `${registry.list().length} subcommands`);
  assert.deepEqual([...new Set(registry.list().map((d) => d.category))].sort(), [...SUBCOMMAND_CATEGORIES].sort());
  assert.deepEqual(
    registry
      .list({ documented: true })
      .map((d) => d.name)
      .sort(),
    Object.keys(DOCUMENTED_DEFAULTS).sort(),
  );
  for (const [name, expected] of Object.entries(DOCUMENTED_DEFAULTS)) {
    const described = registry.describe(name);
    assert.deepEqual(Object.fromEntries(described.args.map((a) => [a.name, a.default])), expected, name);
    assert.ok(described.args.every((a) => a.option === `--${a.name.replace(/_/g, '-')}`));
  }
  assert.equal(registry.describe('branch:create').args.find((a) => a.name === 'name')!.required, true);
  for (const name of [
    'branch:rename',
    'commit:log',
    'stash:drop',
    'worktree:prune',
    'artifact:list',
    'artifact:verify',
    'governance:list',
    'audit:export',
    'audit:checkpoint',
  ]) {
    assert.equal(registry.get(name).documented, false);
  }
  assert.ok(registry.takesFeatureSlug('artifact:write'));
  assert.ok(!registry.takesFeatureSlug('branch:list'));
  const schema = registry.jsonSchema('diff:show') as { properties: Record<string, { default?: unknown }> };
  assert.equal(schema.properties.unified!.default, 3);
});

test('jsonSchema states every default, booleans and lists included, as the defaults the arguments parse to', () => {
  const schema = (name: string) => registry.jsonSchema(name) as { properties: Record<string, { type?: string; default?: unknown }> };
  assert.deepEqual(schema('branch:delete').properties.force, {
    type: 'boolean',
    description: 'delete even when not merged',
    default: false,
  });
  const commit = schema('commit:create').properties;
  assert.deepEqual([commit.all?.default, commit.files?.default, commit.allow_empty?.default], [true, [], false]);
  assert.equal(commit.files?.type, 'array');
  for (const def of registry.list()) {
    const properties = schema(def.name).properties;
    for (const arg of registry.describe(def.name).args) {
      if (arg.default === undefined) assert.ok(!('default' in properties[arg.name]!), `${def.name} ${arg.name} has no default`);
      else assert.deepEqual(properties[arg.name]!.default, arg.default, `${def.name} ${arg.name}`);
    }
  }
});

test('argumentsJsonSchema puts the default of a transformed argument back only where it is an input that parses to itself', () => {
  const schema = argumentsJsonSchema(
    z.object({
      flag: arg.bool('a flag').default(true),
      // The default is an output (a length): no caller may send 3 for a string.
      length: z
        .string()
        .transform((s) => s.length)
        .default(3),
      big: z.bigint().default(1n),
    }),
  ) as { properties: Record<string, { default?: unknown }> };
  assert.equal(schema.properties.flag!.default, true);
  assert.ok(!('default' in schema.properties.length!));
  assert.ok(!('default' in schema.properties.big!), 'no JSON for a BigInt, and no crash');
});

test('arguments: kebab-case or snake_case, strings coerced, unknown ones refused by name', () => {
  assert.deepEqual(registry.parseArgs('artifact:hash', { 'feature-slug': 'f', relative_path: 'a.md' }), {
    feature_slug: 'f',
    relative_path: 'a.md',
  });
  assert.deepEqual(registry.parseArgs('diff:show', { unified: '5', paths: 'a.ts,b.ts' }), {
    from: 'HEAD~1',
    to: 'HEAD',
    stat: false,
    unified: 5,
    paths: ['a.ts', 'b.ts'],
  });
  assert.deepEqual(registry.parseArgs('branch:delete', { name: 'x', force: 'true' }), { name: 'x', force: true });
  assert.throws(() => registry.parseArgs('branch:create', { name: 'x', colour: 'red' }), /colour|unrecognized/i);
  assert.throws(
    () => registry.parseArgs('branch:create', {}),
    (e: unknown) => (e as { details: { field: string } }).details.field === 'name',
  );
  assert.throws(() => registry.parseArgs('artifact:hash', { 'feature-slug': 'f', feature_slug: 'g', relative_path: 'a' }), /given twice/);
  assert.throws(() => registry.parseArgs('branch:create', {}), { message: 'name: required' });
  assert.throws(() => registry.parseArgs('diff:show', { unified: 'many' }), { message: 'unified: expected a number; got "many"' });
  assert.throws(() => registry.parseArgs('stash:pop', { index: '1.5' }), { message: 'index: expected an integer; got "1.5"' });
  assert.throws(() => registry.get('branch:explode'), /branch has branch:create/);
});

test('arguments are redacted and shortened before they are logged', () => {
  assert.deepEqual(sanitizeArgs({ token: 's3cret', nested: { api_key: 'k' }, name: 'x', skip: undefined, content: 'y'.repeat(600) }), {
    token: '[redacted]',
    nested: { api_key: '[redacted]' },
    name: 'x',
    content: `[600 bytes sha256:${createHash('sha256').update('y'.repeat(600)).digest('hex')}]`,
  });
});

describe('audited invocations in a temporary repository', () => {
  let repo: Awaited<ReturnType<typeof tempRepo>>;
  let log: SubcommandAuditLog;
  let ctx: SubcommandContext;
  before(async () => {
    repo = await tempRepo();
    log = await SubcommandAuditLog.open(repo.root, { repoName: 'demo' });
    const { workflow } = makeWorkflow();
    await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
    ctx = {
      workflow,
      git: new GitRepository(repo.root),
      artifacts: new ArtifactStore(join(repo.root, '.agileplus', 'artifacts')),
      actor: 'alice',
    };
  });
  after(async () => {
    await log.close();
    await repo.cleanup();
  });

  test('each invocation writes exactly one complete line with its exit code and duration', async () => {
    const ok = await runSubcommand(registry, log, 'branch:create', { name: 'topic' }, ctx);
    assert.equal(ok.exit_code, EXIT_CODES.ok);
    assert.equal((ok.result as { name: string }).name, 'topic');
    assert.deepEqual(Object.keys(ok.audit).sort(), [
      'actor',
      'args',
      'command',
      'duration_ms',
      'exit_code',
      'hash',
      'id',
      'intent',
      'prev_hash',
      'timestamp',
    ]);
    const cases: [string, Record<string, unknown>, number][] = [
      ['branch:create', { name: '--upload-pack=evil' }, EXIT_CODES.usage],
      ['branch:nope', {}, EXIT_CODES.usage],
      ['audit:verify', { feature_slug: 'missing' }, EXIT_CODES.not_found],
      ['governance:check', { feature_slug: 'f', to: 'SHIPPED' }, EXIT_CODES.ok],
      ['governance:enforce', { feature_slug: 'f', rule: 'wp-ci-before-review', action: 'disable' }, EXIT_CODES.forbidden],
      ['audit:query', { where: 'actor ==' }, EXIT_CODES.usage],
      ['artifact:read', { feature_slug: 'f', relative_path: '../../etc/passwd' }, EXIT_CODES.usage],
      ['audit:log', { feature_slug: 'missing' }, EXIT_CODES.not_found],
      ['worktree:add', { path: '.worktrees/f-wp09', branch: 'f/wp09', feature_slug: 'f', wp_id: 9 }, EXIT_CODES.not_found],
    ];
    for (const [command, args, expected] of cases) {
      const outcome = await runSubcommand(registry, log, command, args, ctx);
      assert.equal(outcome.exit_code, expected, `${command} ${JSON.stringify(args)}: ${outcome.error?.message}`);
      if (expected !== 0) assert.ok(outcome.error?.code && outcome.error.message);
    }
    assert.equal((await ctx.git.run(['branch', '--list', 'f/wp09'])).trim(), '', 'no branch for a package that does not exist');
    const lines = (await readFile(log.path, 'utf8')).split('\n').filter(Boolean);
    assert.equal(lines.length, 1 + cases.length);
    const parsed = lines.map((l) => JSON.parse(l));
    assert.deepEqual(
      parsed.map((p) => p.exit_code),
      [0, ...cases.map((c) => c[2])],
    );
    assert.ok(parsed.every((p) => Number.isInteger(p.duration_ms) && p.duration_ms >= 0 && p.actor === 'alice'));
    // A failed run's line says why, as a refused one's does; a run that succeeded carries no result.
    assert.deepEqual(
      parsed.map((p) => p.result?.error?.code ?? null),
      [
        null,
        'unsafe_argument',
        'invalid_argument',
        'not_found',
        null,
        'forbidden',
        'query_parse_error',
        'path_escape',
        'not_found',
        'not_found',
      ],
    );
    assert.ok(parsed.every((p) => p.result === undefined || typeof p.result.error.message === 'string'));
    const verified = await run(process.execPath, [auditChainBin, 'verify', log.path, '--origin', 'workflow:demo/subcommands', '--json']);
    assert.equal(JSON.parse(verified.stdout).valid, true);
  });

  test('every artifact:* refuses an unknown feature like audit:log: exit 3, not_found, one audit line, nothing on disk', async () => {
    let stdinRead = false;
    const strictCtx = {
      ...ctx,
      readStdin: async () => {
        stdinRead = true;
        return Buffer.from('never');
      },
    };
    const linesBefore = (await readFile(log.path, 'utf8')).split('\n').filter(Boolean).length;
    const unknown = { feature_slug: 'no-such-feature', relative_path: 'spec.md' };
    const calls: [string, Record<string, unknown>][] = [
      ['audit:log', { feature_slug: unknown.feature_slug }],
      ['artifact:write', { ...unknown, content: '# Spec' }],
      ['artifact:write', unknown],
      ['artifact:read', unknown],
      ['artifact:hash', unknown],
      ['artifact:list', { feature_slug: unknown.feature_slug }],
      ['artifact:verify', { ...unknown, hash: `sha256:${'0'.repeat(64)}` }],
      ['artifact:delete', unknown],
    ];
    const [reference, ...artifactOutcomes] = await Promise.all(
      calls.map(([command, args]) => runSubcommand(registry, log, command, args, strictCtx)),
    );
    assert.equal(reference!.exit_code, EXIT_CODES.not_found);
    for (const outcome of artifactOutcomes) {
      assert.equal(outcome.exit_code, reference!.exit_code, `${outcome.command}: ${JSON.stringify(outcome.error ?? outcome.result)}`);
      assert.deepEqual(outcome.error, reference!.error, outcome.command);
      assert.equal(outcome.audit.exit_code, EXIT_CODES.not_found, outcome.command);
    }
    assert.equal(stdinRead, false, 'artifact:write did not wait for standard input for a feature that does not exist');
    await assert.rejects(stat(join(repo.root, '.agileplus', 'artifacts', unknown.feature_slug)), { code: 'ENOENT' });
    const lines = (await readFile(log.path, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines
        .slice(linesBefore)
        .map((l) => [l.command, l.exit_code])
        .sort(),
      calls.map(([command]) => [command, EXIT_CODES.not_found]).sort(),
    );
  });

  test('a malformed feature slug is a usage error (exit 2, field feature_slug) in every subcommand that takes one', async () => {
    const takingSlug = registry.list().filter((d) => registry.takesFeatureSlug(d.name));
    assert.ok(takingSlug.length >= 10, takingSlug.map((d) => d.name).join(', '));
    for (const def of takingSlug) {
      // Every other required argument is given ('1' reads as a text or an integer), so only the slug can fail.
      const others = Object.fromEntries(
        registry
          .describe(def.name)
          .args.filter((a) => a.required && a.name !== 'feature_slug')
          .map((a) => [a.name, a.name === 'action' ? 'enable' : '1']),
      );
      assert.throws(
        () => registry.parseArgs(def.name, { ...others, feature_slug: '../x' }),
        (e: unknown) => (e as { details?: { field?: string } }).details?.field === 'feature_slug',
        def.name,
      );
    }
    const malformed = { feature_slug: '../x', relative_path: 'a.md', content: 'x' };
    const outcome = await runSubcommand(registry, log, 'artifact:write', malformed, ctx);
    assert.deepEqual([outcome.exit_code, outcome.error?.code], [EXIT_CODES.usage, 'invalid_argument']);
  });

  test('a from_file or key_file that is not there is not_found (exit 3) naming the argument, not an internal ENOENT', async () => {
    const calls: [string, Record<string, unknown>, string][] = [
      ['artifact:write', { feature_slug: 'f', relative_path: 'x.md', from_file: 'missing.md' }, 'from_file "missing.md" does not exist'],
      ['audit:checkpoint', { feature_slug: 'f', key_file: 'missing.pem', key_name: 'k' }, 'key_file "missing.pem" does not exist'],
    ];
    for (const [command, args, message] of calls) {
      const outcome = await runSubcommand(registry, log, command, args, ctx);
      assert.deepEqual([outcome.exit_code, outcome.error?.code, outcome.error?.message], [EXIT_CODES.not_found, 'not_found', message]);
    }
  });

  test('a from_file or key_file naming a FIFO is refused at once, never waited on: not_found (exit 3) naming the argument', async () => {
    const pipe = join(repo.root, 'pipe');
    await makeFifo(pipe);
    // Later tests commit the work tree, where git would refuse a FIFO.
    after(() => rm(pipe, { force: true }));
    const calls: [string, Record<string, unknown>, string][] = [
      ['artifact:write', { feature_slug: 'f', relative_path: 'x.md', from_file: 'pipe' }, 'from_file'],
      ['audit:checkpoint', { feature_slug: 'f', key_file: 'pipe', key_name: 'k' }, 'key_file'],
    ];
    for (const [command, args, field] of calls) {
      const outcome = await settlesWithoutWaitingOn(pipe, runSubcommand(registry, log, command, args, ctx));
      assert.deepEqual(
        [outcome.exit_code, outcome.error?.code, outcome.error?.message, outcome.error?.details],
        [EXIT_CODES.not_found, 'not_found', `${field} "pipe" is a FIFO (named pipe), not a regular file`, { field }],
      );
    }
  });

  test('artifact:write reads standard input when neither content nor from_file is given; from_file is confined', async () => {
    const stdinCtx = {
      ...ctx,
      readStdin: async () => Buffer.concat(await Readable.from([Buffer.from('from '), Buffer.from('stdin')]).toArray()),
    };
    const written = await runSubcommand(registry, log, 'artifact:write', { feature_slug: 'f', relative_path: 'notes.md' }, stdinCtx);
    assert.equal(written.exit_code, 0);
    assert.equal((await ctx.artifacts.read('f', 'notes.md')).content.toString(), 'from stdin');
    await writeFile(join(repo.root, 'plan.md'), '# plan');
    const fromFile = await runSubcommand(
      registry,
      log,
      'artifact:write',
      { feature_slug: 'f', relative_path: 'plan.md', from_file: 'plan.md' },
      ctx,
    );
    assert.equal((fromFile.result as { size_bytes: number }).size_bytes, 6);
    const escaped = await runSubcommand(
      registry,
      log,
      'artifact:write',
      { feature_slug: 'f', relative_path: 'x', from_file: '/etc/passwd' },
      ctx,
    );
    assert.equal(escaped.error?.code, 'path_escape');
    const hashed = await runSubcommand(registry, log, 'artifact:hash', { feature_slug: 'f', relative_path: 'plan.md' }, ctx);
    assert.match((hashed.result as { hash: string }).hash, /^sha256:[0-9a-f]{64}$/);
  });
});

test('parallel writers in 20 processes write 20 intact lines that form one chain', { timeout: 120_000 }, async () => {
  const repo = await tempRepo();
  try {
    const writer = fileURLToPath(new URL('../../test/fixtures/subcommandWriter.ts', import.meta.url));
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        run(process.execPath, ['--conditions=@switchyard/source', '--import=tsx', writer, repo.root, String(i)]),
      ),
    );
    const lines = (await readFile(join(repo.root, '.agileplus', 'audit.jsonl'), 'utf8')).split('\n');
    assert.equal(lines.pop(), '', 'the file ends with a newline');
    assert.equal(lines.length, 20);
    assert.deepEqual(
      lines.map((l) => JSON.parse(l).args.writer).sort((a, b) => a - b),
      Array.from({ length: 20 }, (_, i) => i),
    );
    const verified = await run(process.execPath, [
      auditChainBin,
      'verify',
      join(repo.root, '.agileplus', 'audit.jsonl'),
      '--origin',
      'workflow:parallel/subcommands',
      '--json',
    ]);
    assert.equal(JSON.parse(verified.stdout).entries_verified, 20);
  } finally {
    await repo.cleanup();
  }
});
