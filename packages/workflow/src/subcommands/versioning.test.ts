/**
 * The specification's versioning rules on a fixture registry: arguments are never removed (a
 * renamed one stays as a deprecated alias), new ones are optional, deprecated subcommands move
 * to `legacy:*`; a call through an alias or a legacy subcommand works and is warned about, in
 * its result and in its audit line. Then the built-in registry against the arguments the
 * project documented before it took the specification's names.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { tempRepo } from '../../test/gitFixture.js';
import { makeWorkflow } from '../../test/helpers.js';
import { ArtifactStore } from '../git/artifactStore.js';
import { GitRepository } from '../git/gitRepository.js';
import {
  arg,
  BUILTIN_SUBCOMMANDS,
  DispatchTool,
  defineSubcommand,
  EXIT_CODES,
  invokeSubcommand,
  legacySubcommand,
  type RegistryShape,
  registryShape,
  SubcommandAuditLog,
  type SubcommandContext,
  SubcommandRegistry,
  versioningViolations,
} from './index.js';

const greetV1 = defineSubcommand({
  name: 'branch:greet',
  summary: 'v1 greeting',
  args: z.object({ name: arg.text('who'), loud: arg.bool('shout').default(false) }),
  run: async (_ctx, a) => ({ text: a.loud ? `HELLO ${a.name.toUpperCase()}` : `hello ${a.name}` }),
});
const countV1 = defineSubcommand({
  name: 'branch:count',
  summary: 'v1 count',
  args: z.object({ from: arg.int('start').default(0) }),
  run: async (_ctx, a) => ({ version: 1, first: a.from }),
});
const v1 = new SubcommandRegistry([greetV1, countV1]);

// v2 renames greet's `name` to `who` and adds an optional argument; count takes a new required
// argument, so its v1 form moves to legacy:branch:count.
const greetV2 = defineSubcommand({
  name: 'branch:greet',
  summary: 'v2 greeting',
  args: z.object({ who: arg.text('who'), loud: arg.bool('shout').default(false), end: arg.text('punctuation').default('!') }),
  aliases: { name: 'who' },
  run: async (_ctx, a) => ({ text: `${a.loud ? 'HELLO' : 'hello'} ${a.who}${a.end}` }),
});
const countV2 = defineSubcommand({
  name: 'branch:count',
  summary: 'v2 count',
  args: z.object({ start: arg.int('start') }),
  run: async (_ctx, a) => ({ version: 2, first: a.start }),
});
const v2 = new SubcommandRegistry([greetV2, countV2, legacySubcommand(countV1, 'branch:count --start N')]);

test('a compatible successor breaks no versioning rule; each way of breaking one is named', () => {
  assert.deepEqual(versioningViolations(registryShape(v1), v2), []);
  const broken = (defs: Parameters<typeof defineSubcommand>[0][]) => new SubcommandRegistry(defs.map((d) => defineSubcommand(d)));
  const withoutAlias = broken([
    { ...greetV2Input(), aliases: {} },
    { name: 'branch:count', summary: 'x', args: z.object({ from: arg.int('start').default(0) }), run: async () => 0 },
  ]);
  // Without the alias, `name` is gone and `who` is a new required argument.
  assert.deepEqual(versioningViolations(registryShape(v1), withoutAlias), [
    'branch:greet no longer takes name',
    'branch:greet has a new required argument who; new arguments are optional',
  ]);
  const newRequired = broken([
    greetV2Input(),
    { name: 'branch:count', summary: 'x', args: z.object({ from: arg.int('start').default(0), by: arg.int('step') }), run: async () => 0 },
  ]);
  assert.deepEqual(versioningViolations(registryShape(v1), newRequired), [
    'branch:count has a new required argument by; new arguments are optional',
  ]);
  const removed = broken([greetV2Input()]);
  assert.deepEqual(versioningViolations(registryShape(v1), removed), [
    'branch:count was removed; a deprecated subcommand moves to legacy:branch:count',
  ]);
  const legacyLosesArgument = new SubcommandRegistry([
    greetV2,
    countV2,
    legacySubcommand(defineSubcommand({ name: 'branch:count', summary: 'x', args: z.object({}), run: async () => 0 }), 'x'),
  ]);
  assert.deepEqual(versioningViolations(registryShape(v1), legacyLosesArgument), ['legacy:branch:count no longer takes from']);
});

function greetV2Input() {
  return {
    name: 'branch:greet' as const,
    summary: 'v2 greeting',
    args: z.object({ who: arg.text('who'), loud: arg.bool('shout').default(false), end: arg.text('punctuation').default('!') }),
    aliases: { name: 'who' },
    run: async () => 0,
  };
}

test('an alias is accepted in place of its argument, a required one included; both together are refused', () => {
  assert.deepEqual(v2.parseArgs('branch:greet', { name: 'ada' }), { who: 'ada', loud: false, end: '!' });
  assert.deepEqual(v2.deprecations('branch:greet', { name: 'ada' }), ['branch:greet: name is deprecated; use who (--name is now --who)']);
  assert.deepEqual(v2.deprecations('branch:greet', { who: 'ada' }), []);
  assert.throws(() => v2.parseArgs('branch:greet', { name: 'ada', who: 'bob' }), {
    message: 'name: given with who, of which it is the deprecated alias',
  });
  assert.deepEqual(
    v2.describe('branch:greet').args.find((a) => a.name === 'who'),
    { name: 'who', option: '--who', required: true, default: undefined, description: 'who', deprecated_aliases: ['--name'] },
  );
  assert.throws(
    () =>
      defineSubcommand({ name: 'branch:x', summary: 'x', args: z.object({ a: arg.text('a') }), aliases: { a: 'a' }, run: async () => 0 }),
    /alias a must be a free name/,
  );
});

describe('deprecated calls in a temporary repository', () => {
  let repo: Awaited<ReturnType<typeof tempRepo>>;
  let log: SubcommandAuditLog;
  let ctx: SubcommandContext;
  before(async () => {
    repo = await tempRepo();
    log = await SubcommandAuditLog.open(repo.root, { repoName: 'demo' });
    const { workflow } = makeWorkflow();
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

  const lines = async () =>
    (await readFile(log.path, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  test('an alias and a legacy subcommand run, warn in the outcome and in their audit line; current names draw no warning', async () => {
    const aliased = await invokeSubcommand(v2, log, 'branch:greet', { name: 'ada', loud: 'true' }, ctx);
    assert.deepEqual([aliased.exit_code, aliased.result], [EXIT_CODES.ok, { text: 'HELLO ada!' }]);
    assert.deepEqual(aliased.warnings, ['branch:greet: name is deprecated; use who (--name is now --who)']);
    assert.deepEqual(aliased.audit.warnings, aliased.warnings);

    const legacy = await invokeSubcommand(v2, log, 'legacy:branch:count', { from: '7' }, ctx);
    assert.deepEqual(legacy.result, { version: 1, first: 7 });
    assert.deepEqual(legacy.warnings, ['legacy:branch:count is deprecated; use branch:count --start N']);
    const current = await invokeSubcommand(v2, log, 'branch:count', { start: '3' }, ctx);
    assert.deepEqual([current.result, current.warnings], [{ version: 2, first: 3 }, undefined]);
    const refused = await invokeSubcommand(v2, log, 'branch:count', { from: '3' }, ctx);
    assert.equal(refused.exit_code, EXIT_CODES.usage, 'the new form does not take the old argument: that is what legacy:* is for');

    const written = await lines();
    assert.deepEqual(
      written.map((l) => [l.command, l.exit_code, l.warnings ?? null]),
      [
        ['branch:greet', 0, aliased.warnings],
        ['legacy:branch:count', 0, legacy.warnings],
        ['branch:count', 0, null],
        ['branch:count', EXIT_CODES.usage, null],
      ],
    );
    assert.equal((await log.verify()).valid, true);
  });

  test('the dispatch tool takes a legacy:* name and answers with its warnings', async () => {
    const tool = new DispatchTool({ registry: v2, log, context: ctx });
    const result = await tool.dispatch({ command: 'dispatch_command', args: { command: 'legacy:branch:count', from: 2 } });
    assert.deepEqual(
      [result.ok, result.result, result.warnings],
      [true, { version: 1, first: 2 }, ['legacy:branch:count is deprecated; use branch:count --start N']],
    );
    assert.deepEqual((await lines()).at(-1)!.warnings, result.warnings);
  });
});

/**
 * The documented subcommands' arguments as the project named them before it took the
 * specification's (required ones marked), and the subcommands whose old form is legacy now.
 */
const PROJECT_ARGUMENTS_BEFORE_THE_SPEC: RegistryShape = {
  'branch:delete': { name: { required: true }, force: { required: false } },
  'branch:list': {},
  'commit:create': { message: { required: true }, all: { required: false }, paths: { required: false }, allow_empty: { required: false } },
  'commit:amend': { message: { required: false }, all: { required: false } },
  'commit:fixup': { target: { required: true }, all: { required: false } },
  'diff:show': { from: { required: false }, to: { required: false }, context: { required: false }, paths: { required: false } },
  'worktree:add': {
    feature_slug: { required: true },
    wp: { required: true },
    base: { required: false },
    path: { required: false },
    branch: { required: false },
  },
  'governance:check': { feature_slug: { required: true }, wp: { required: false }, to: { required: false } },
  'governance:enforce': { rule_id: { required: true }, action: { required: true } },
  'audit:log': { feature_slug: { required: true }, limit: { required: false }, since: { required: false } },
};

test('the built-in registry keeps every argument the project documented before, as an alias or in legacy:*', () => {
  const registry = new SubcommandRegistry(BUILTIN_SUBCOMMANDS);
  assert.deepEqual(versioningViolations(PROJECT_ARGUMENTS_BEFORE_THE_SPEC, registry), []);
  assert.deepEqual(
    registry
      .list()
      .filter((d) => d.deprecated)
      .map((d) => d.name)
      .sort(),
    ['legacy:governance:check', 'legacy:governance:enforce', 'legacy:worktree:add'],
  );
  assert.ok(registry.list().every((d) => !d.deprecated || !d.documented));
});
