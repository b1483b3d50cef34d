/**
 * Every hidden subcommand, end to end, in a temporary git repository: the
 * documented defaults take effect, each invocation writes exactly one
 * complete audit line with the right exit code and a duration, injection
 * attempts are refused, `--help` hides them, and 20 parallel processes
 * write 20 intact lines.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BUILTIN_SUBCOMMANDS, SubcommandAuditLog, SubcommandRegistry } from '@switchyard/workflow';
import { auditLines, type TempRepo, tempRepo, type YardResult, yard, yardProcess } from './helpers.js';

const registry = new SubcommandRegistry(BUILTIN_SUBCOMMANDS);
const SLUG = '001-login';
let repo: TempRepo;
const covered = new Set<string>();

before(async () => {
  repo = await tempRepo();
  assert.equal((await yard(['specify', SLUG, '--title', 'Log in'], { cwd: repo.root })).code, 0);
  assert.equal((await yard(['wp', 'add', SLUG, '--title', 'Form', '--file-scope', 'src/login.ts'], { cwd: repo.root })).code, 0);
});
after(() => repo.cleanup());

/** Runs one subcommand with --output json and checks its one audit line. */
async function sub(
  name: string,
  args: string[] = [],
  expectCode = 0,
  options: { stdin?: string; warned?: boolean } = {},
): Promise<YardResult> {
  covered.add(name);
  const before = (await auditLines(repo.root)).length;
  const r = await yard([name, ...args, '--output', 'json'], {
    cwd: repo.root,
    ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
  });
  assert.equal(r.code, expectCode, `${name} ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  const lines = await auditLines(repo.root);
  assert.equal(lines.length, before + 1, `${name} wrote exactly one audit line`);
  const line = lines.at(-1)!;
  assert.equal(line.command, name);
  assert.equal(line.exit_code, expectCode);
  assert.ok(Number.isInteger(line.duration_ms) && (line.duration_ms as number) >= 0, 'duration_ms is a whole number of ms');
  assert.equal(line.actor, 'Test User');
  for (const key of ['id', 'timestamp', 'prev_hash', 'hash', 'args']) assert.ok(key in line, `audit line has ${key}`);
  // A deprecated argument name is warned about on stderr, and in the audit line.
  if (options.warned) {
    assert.match(r.stderr, /^yard: warning: .* is deprecated/);
    assert.ok(Array.isArray(line.warnings));
  } else if (expectCode === 0) assert.equal(r.stderr, '');
  else assert.ok(r.json === undefined || r.stdout === '', 'a failure prints nothing on stdout');
  if (expectCode !== 0) {
    const body = JSON.parse(r.stderr) as { error: { code: string; message: string } };
    assert.ok(body.error.code && body.error.message, 'errors are {"error":{"code","message"}} on stderr');
  }
  return r;
}

const git = (...args: string[]) => repo.git(...args).trim();

// One suite, run in order: the steps share one repository.
describe('yard hidden subcommands', { concurrency: 1 }, () => {
  describe('branch', () => {
    test('branch:create prints its audit record; base defaults to main, checkout to false', async () => {
      git('switch', '--quiet', '-c', 'elsewhere');
      await writeFile(join(repo.root, 'other.txt'), 'x');
      git('add', 'other.txt');
      git('commit', '--quiet', '-m', 'elsewhere');
      const r = await sub('branch:create', ['--name', 'feat/a']);
      const record = r.json<Record<string, unknown>>();
      assert.equal(record.command, 'branch:create');
      // The arguments as the schema parsed them, defaults included: only checked arguments are logged.
      assert.deepEqual(record.args, { name: 'feat/a', base: 'main', checkout: false });
      assert.equal(record.exit_code, 0);
      assert.equal(git('rev-parse', 'feat/a'), git('rev-parse', 'main'), 'created from main, not from the current branch');
      assert.equal(git('branch', '--show-current'), 'elsewhere', 'not checked out');
      git('switch', '--quiet', 'main');
    });

    test('branch:checkout (create defaults to false), branch:current, branch:rename, branch:list', async () => {
      await sub('branch:checkout', ['--name', 'does-not-exist'], 3);
      await sub('branch:checkout', ['--name', 'feat/a']);
      assert.equal((await sub('branch:current')).json<{ branch: string }>().branch, 'feat/a');
      await sub('branch:checkout', ['--name', 'main']);
      await sub('branch:rename', ['--from', 'feat/a', '--to', 'feat/b']);
      const names = (await sub('branch:list')).json<{ name: string; current: boolean }[]>().map((b) => b.name);
      assert.ok(names.includes('feat/b') && !names.includes('feat/a') && names.includes('main'));
    });

    test('branch:delete refuses unmerged work unless --force (force defaults to false)', async () => {
      await sub('branch:checkout', ['--name', 'feat/u', '--create']);
      await writeFile(join(repo.root, 'u.txt'), 'unmerged');
      await sub('commit:create', ['--message', 'unmerged work']);
      await sub('branch:checkout', ['--name', 'main']);
      // Unmerged work is a state that refuses the delete (a conflict, exit 5), not a git failure (exit 1).
      const refused = await sub('branch:delete', ['--name', 'feat/u'], 5);
      const { error } = JSON.parse(refused.stderr) as { error: { code: string; message: string; details: Record<string, unknown> } };
      assert.equal(error.code, 'conflict');
      assert.match(error.message, /^branch "feat\/u" is not fully merged: pass --force to delete it anyway$/);
      assert.equal(error.details.reason, 'branch_not_merged');
      assert.match(String(error.details.git_output), /not fully merged/, "git's own text is kept in details");
      await sub('branch:delete', ['--name', 'feat/u', '--force']);
      await sub('branch:delete', ['--name', 'feat/b']);
      assert.doesNotMatch(git('branch'), /feat\/(u|b)/);
    });
  });

  describe('commit', () => {
    test('commit:create stages everything by default; commit:amend keeps the message; commit:fixup; commit:rebase autosquashes onto main', async () => {
      await sub('branch:checkout', ['--name', 'work', '--create']);
      await writeFile(join(repo.root, 'new.txt'), 'untracked at first');
      const created = (await sub('commit:create', ['--message', 'add new.txt'])).json<{ id: string; subject: string }>();
      assert.equal(created.subject, 'add new.txt');
      assert.match(git('show', '--name-only', '--format=', 'HEAD'), /new\.txt/, 'all defaults to true: untracked files are staged');
      await sub('commit:create', ['--message', 'nothing'], 5);
      await sub('commit:create', ['--message', 'empty on purpose', '--allow-empty']);
      await writeFile(join(repo.root, 'other.txt'), 'amended in');
      await sub('commit:amend');
      assert.equal(git('log', '-1', '--format=%s'), 'empty on purpose', 'amend keeps the message by default');
      assert.match(git('show', '--name-only', '--format=', 'HEAD'), /other\.txt/);
      await writeFile(join(repo.root, 'new.txt'), 'fixed up');
      await sub('commit:fixup', ['--target', 'HEAD~1']);
      assert.equal(git('log', '-1', '--format=%s'), 'fixup! add new.txt');
      const rebased = (await sub('commit:rebase')).json<{ onto: string }>();
      assert.equal(rebased.onto, 'main');
      assert.doesNotMatch(git('log', '--format=%s', 'main..HEAD'), /fixup!/, 'autosquash defaults to true');
      const log = (await sub('commit:log')).json<unknown[]>();
      assert.ok(log.length >= 3 && log.length <= 20, 'limit defaults to 20');
      const shown = (await sub('commit:show')).json<Record<string, unknown>>();
      assert.ok(JSON.stringify(shown).includes(git('rev-parse', 'HEAD')), 'rev defaults to HEAD');
    });
  });

  describe('diff', () => {
    test('diff:show defaults to HEAD~1..HEAD with 3 lines of context; diff:stat and diff:files', async () => {
      await writeFile(join(repo.root, 'ctx.txt'), `${Array.from({ length: 12 }, (_, i) => `line ${i}`).join('\n')}\n`);
      await sub('commit:create', ['--message', 'ctx']);
      await writeFile(
        join(repo.root, 'ctx.txt'),
        `${Array.from({ length: 12 }, (_, i) => (i === 6 ? 'changed' : `line ${i}`)).join('\n')}\n`,
      );
      await sub('commit:create', ['--message', 'ctx changed']);
      const shown = (await sub('diff:show')).json<{ from: string; to: string; unified: number; diff: string }>();
      assert.deepEqual([shown.from, shown.to, shown.unified], ['HEAD~1', 'HEAD', 3]);
      assert.match(shown.diff, /@@ -4,7 \+4,7 @@/, 'three lines of context on each side');
      const stat = (await sub('diff:stat')).json<{ files: { path: string }[] }>();
      assert.deepEqual(
        stat.files.map((f) => f.path),
        ['ctx.txt'],
      );
      const files = (await sub('diff:files', ['--from', 'HEAD~2'])).json<unknown>();
      assert.ok(JSON.stringify(files).includes('ctx.txt'));
    });
  });

  describe('stash', () => {
    test('stash:push leaves untracked files by default; list, show, apply, drop and pop use index 0 (the latest)', async () => {
      await writeFile(join(repo.root, 'ctx.txt'), 'dirty\n');
      await writeFile(join(repo.root, 'untracked.txt'), 'stay');
      await sub('stash:push', ['--message', 'first']);
      assert.ok(existsSync(join(repo.root, 'untracked.txt')), 'include_untracked defaults to false');
      await writeFile(join(repo.root, 'README.md'), 'second change\n');
      await sub('stash:push', ['--message', 'second']);
      const list = (await sub('stash:list')).json<{ index: number; message: string }[]>();
      assert.equal(list.length, 2);
      assert.match(list[0]!.message, /second/);
      assert.match((await sub('stash:show')).json<{ patch: string }>().patch, /second change/, 'index 0 is the latest');
      await sub('stash:apply');
      git('checkout', '--', 'README.md');
      await sub('stash:drop');
      assert.equal((await sub('stash:list')).json<unknown[]>().length, 1);
      await sub('stash:pop');
      assert.equal(await readFile(join(repo.root, 'ctx.txt'), 'utf8'), 'dirty\n');
      git('checkout', '--', 'ctx.txt');
    });
  });

  describe('worktree', () => {
    test('worktree:add takes --path and --branch (base main) with the package as metadata; list, remove, prune', async () => {
      const added = (
        await sub('worktree:add', ['--path', `.worktrees/${SLUG}-wp01`, '--branch', `${SLUG}/wp01`, '--feature-slug', SLUG, '--wp-id', '1'])
      ).json<{ path: string; branch: string }>();
      assert.equal(added.path, join(repo.root, '.worktrees', `${SLUG}-wp01`));
      assert.equal(added.branch, `${SLUG}/wp01`);
      assert.equal(git('rev-parse', `${SLUG}/wp01`), git('rev-parse', 'main'));
      const list = (await sub('worktree:list')).json<
        { path: string; branch: string; feature_slug: string | null; wp_id: number | null }[]
      >();
      assert.deepEqual(
        list.find((w) => w.path === added.path),
        { path: added.path, branch: `${SLUG}/wp01`, feature_slug: SLUG, wp_id: 1 },
      );
      await sub('worktree:remove', ['--path', `.worktrees/${SLUG}-wp01`]);
      await sub('worktree:prune');
      assert.equal((await sub('worktree:list')).json<unknown[]>().length, 1);
    });

    test('legacy:worktree:add keeps the old form (defaults from the slug and sequence), with a warning on stderr and in its audit line', async () => {
      covered.add('legacy:worktree:add');
      const r = await yard(['legacy:worktree:add', '--feature-slug', SLUG, '--wp', '1', '--output', 'json'], { cwd: repo.root });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.json<{ path: string }>().path, join(repo.root, '.worktrees', `${SLUG}-wp01`));
      assert.match(r.stderr, /^yard: warning: legacy:worktree:add is deprecated; use worktree:add/);
      const line = (await auditLines(repo.root)).at(-1)!;
      assert.deepEqual([line.command, (line.warnings as string[]).length], ['legacy:worktree:add', 1]);
      await sub('worktree:remove', ['--path', `.worktrees/${SLUG}-wp01`]);
    });
  });

  describe('artifact', () => {
    test('write (content, and stdin when neither content nor from_file), read, hash, list, verify, delete', async () => {
      const content = '# Spec\n\nLog in with passkeys.\n';
      const written = (await sub('artifact:write', ['--feature-slug', SLUG, '--relative-path', 'spec.md', '--content', content])).json<{
        path: string;
        hash: string;
        size_bytes: number;
      }>();
      const hash = `sha256:${createHash('sha256').update(content).digest('hex')}`;
      assert.deepEqual(written, { path: `${SLUG}/spec.md`, hash, size_bytes: Buffer.byteLength(content) });
      await sub('artifact:write', ['--feature-slug', SLUG, '--relative-path', 'notes/plan.md'], 0, { stdin: 'from stdin\n' });
      assert.equal(
        (await sub('artifact:read', ['--feature-slug', SLUG, '--relative-path', 'notes/plan.md'])).json<{ content: string }>().content,
        'from stdin\n',
      );
      assert.deepEqual((await sub('artifact:hash', ['--feature-slug', SLUG, '--relative-path', 'spec.md'])).json(), written);
      assert.deepEqual(
        (await sub('artifact:list', ['--feature-slug', SLUG]))
          .json<{ path: string }[]>()
          .map((a) => a.path)
          .sort(),
        [`${SLUG}/notes/plan.md`, `${SLUG}/spec.md`],
      );
      assert.equal(
        (await sub('artifact:verify', ['--feature-slug', SLUG, '--relative-path', 'spec.md', '--hash', hash])).json<{ valid: boolean }>()
          .valid,
        true,
      );
      await sub('artifact:delete', ['--feature-slug', SLUG, '--relative-path', 'notes/plan.md']);
      await sub('artifact:read', ['--feature-slug', SLUG, '--relative-path', 'notes/plan.md'], 3);
    });
  });

  describe('governance', () => {
    test('check (--transition; --wp for a package; -v lists the rules checked), list, show, and admin-only enforce and define', async () => {
      const feature = (await sub('governance:check', ['--feature-slug', SLUG, '--transition', 'RESEARCHED'])).json<{
        passed: boolean;
        transition: string;
      }>();
      assert.deepEqual(feature, { passed: true, violations: [], transition: 'SPECIFIED -> RESEARCHED' });
      const wp = (
        await sub('governance:check', ['--feature-slug', SLUG, '--wp', '1', '--to', 'DOING', '--verbose'], 0, { warned: true })
      ).json<{
        transition: string;
        checked_rules: string[];
      }>();
      assert.deepEqual([wp.transition, wp.checked_rules], ['PLANNED -> DOING', []]);
      covered.add('legacy:governance:check');
      const next = await yard(['legacy:governance:check', '--feature-slug', SLUG, '--output', 'json'], { cwd: repo.root });
      assert.deepEqual(
        [next.code, next.json<{ transition: string }>().transition],
        [0, 'SPECIFIED -> RESEARCHED'],
        'the old default: the next move',
      );
      const rules = (await sub('governance:list')).json<{ rule_id: string }[]>();
      assert.ok(rules.some((r) => r.rule_id === 'wp-ci-before-review'));
      assert.equal((await sub('governance:show', ['--rule-id', 'wp-ci-before-review'])).json<{ enabled: boolean }>().enabled, true);
      const enforce = ['--feature-slug', SLUG, '--rule', 'feature-coverage-minimum', '--action'];
      await sub('governance:enforce', [...enforce, 'enable'], 6);
      await writeFile(join(repo.root, '.agileplus', 'config.yaml'), 'admins: ["Test User"]\n');
      assert.deepEqual(
        Object.entries((await sub('governance:enforce', [...enforce, 'enable'])).json<Record<string, unknown>>()).filter(([k]) =>
          ['enabled', 'global_enabled', 'override'].includes(k),
        ),
        [
          ['enabled', true],
          ['global_enabled', false],
          ['override', true],
        ],
      );
      await sub('governance:enforce', [...enforce, 'reset']);
      // The global setting, as before the specification's arguments: legacy:governance:enforce.
      covered.add('legacy:governance:enforce');
      const global = await yard(
        ['legacy:governance:enforce', '--rule-id', 'feature-coverage-minimum', '--action', 'reset', '--output', 'json'],
        { cwd: repo.root },
      );
      assert.deepEqual([global.code, global.json<{ enabled: boolean }>().enabled], [0, false]);
      assert.match(global.stderr, /legacy:governance:enforce is deprecated/);
      const defined = (
        await sub('governance:define', [
          '--rule-id',
          'lint-first',
          '--transition',
          'DOING -> REVIEW',
          '--scope',
          'work_package',
          '--required-evidence',
          'lint_result',
        ])
      ).json<{ domain: string; required_evidence: string[] }>();
      assert.deepEqual([defined.domain, defined.required_evidence], ['custom', ['lint_result']]);
    });
  });

  describe('audit', () => {
    test('log (newest 50 by default), query, verify, export, checkpoint and chains', async () => {
      const entries = (await sub('audit:log', ['--feature-slug', SLUG])).json<{ transition: string }[]>();
      assert.deepEqual(
        entries.map((e) => e.transition),
        // The governance test enabled a rule for this feature, then reset it: the feature's own trail records both.
        ['NONE -> CREATED', 'CREATED -> SPECIFIED', 'NONE -> PLANNED', 'GLOBAL -> ENABLED', 'ENABLED -> GLOBAL'],
      );
      assert.equal((await sub('audit:log', ['--feature-slug', SLUG, '--limit', '1'])).json<unknown[]>().length, 1);
      const rows = (await sub('audit:query', ['--where', 'action = transition', '--group-by', 'to'])).json<
        { to: string; count: number }[]
      >();
      assert.deepEqual(rows, [{ to: 'SPECIFIED', count: 1 }]);
      await sub('audit:query', ['--where', 'actor = '], 2);
      const verified = (await sub('audit:verify', ['--feature-slug', SLUG])).json<{ valid: boolean; entries_verified: number }>();
      assert.deepEqual([verified.valid, verified.entries_verified], [true, 5]);
      const exported = (await sub('audit:export', ['--feature-slug', SLUG])).json<{ origin: string; jsonl: string }>();
      assert.equal(exported.jsonl.trim().split('\n').length, 5);
      assert.match(exported.origin, new RegExp(`^workflow:.+/${SLUG}$`));
      const head = (await sub('audit:checkpoint', ['--feature-slug', SLUG])).json<{ size: number; note: null }>();
      assert.deepEqual([head.size, head.note], [5, null]);
      const chains = (await sub('audit:chains')).json<{ chain: string }[]>().map((c) => c.chain);
      assert.ok(chains.includes(SLUG));
    });

    test('the subcommand log itself verifies as one chain', async () => {
      const log = await SubcommandAuditLog.open(repo.root);
      try {
        const result = await log.verify();
        assert.equal(result.valid, true, result.error_message ?? '');
        assert.equal(result.entries_verified, (await auditLines(repo.root)).length);
      } finally {
        await log.close();
      }
    });
  });

  describe('refusals', () => {
    test('unknown subcommands and unknown or malformed arguments exit 2 and are still logged once', async () => {
      await sub('branch:teleport', [], 2);
      const unknownArg = await sub('branch:list', ['--colour', 'red'], 2);
      assert.match(unknownArg.stderr, /colour/);
      await sub('diff:show', ['--unified', 'many'], 2);
      await sub('audit:log', [], 2);
      await sub('audit:log', ['--feature-slug', SLUG, '--limit', '0'], 2);
    });

    test('injection through arguments and paths is refused with a clear error, and nothing escapes the repository', async () => {
      const attempts: [string, string[], RegExp][] = [
        ['branch:create', ['--name', '--upload-pack=touch /tmp/pwned'], /looks like an option/],
        ['branch:create', ['--name=-evil'], /looks like an option/],
        ['branch:create', ['--name', 'a..b'], /branch|name/],
        ['diff:show', ['--from', '--no-index'], /looks like an option/],
        ['diff:show', ['--from', 'HEAD;rm -rf /'], /revision|from/],
        [
          'artifact:write',
          ['--feature-slug', SLUG, '--relative-path', '../../escape.txt', '--content', 'x'],
          /relative_path|inside|escape/,
        ],
        ['artifact:write', ['--feature-slug', '../x', '--relative-path', 'a.txt', '--content', 'x'], /feature_slug|slug/],
        ['artifact:write', ['--feature-slug', SLUG, '--relative-path', 'a.txt', '--from-file', '/etc/passwd'], /from_file/],
        ['worktree:add', ['--feature-slug', SLUG, '--wp-id', '1', '--branch', 'x', '--path', '../outside'], /path/],
        ['commit:create', ['--message', 'x', '--files', '../../etc/passwd'], /path/],
        ['audit:checkpoint', ['--feature-slug', SLUG, '--key-file', '/etc/shadow', '--key-name', 'k'], /key_file/],
      ];
      for (const [name, args, message] of attempts) {
        const r = await sub(name, args, 2);
        const body = JSON.parse(r.stderr) as { error: { code: string; message: string } };
        assert.match(`${body.error.code} ${body.error.message}`, message, `${name} ${args.join(' ')}`);
      }
      assert.ok(!existsSync(join(repo.root, '..', 'escape.txt')));
      assert.ok(!existsSync(join(repo.root, '..', 'outside')));
    });

    test('every subcommand has been run by this file', () => {
      const missing = registry
        .list()
        .map((d) => d.name)
        .filter((n) => !covered.has(n));
      assert.deepEqual(missing, []);
    });
  });

  describe('processes', () => {
    test('yard --help lists no hidden subcommand; a hidden one explains itself with --help', async () => {
      const help = await yardProcess(['--help'], { cwd: repo.root });
      assert.equal(help.code, 0);
      assert.match(help.stdout, /specify/);
      for (const def of registry.list()) assert.ok(!help.stdout.includes(def.name), `--help mentions ${def.name}`);
      assert.doesNotMatch(help.stdout, /\b(branch|commit|diff|stash|worktree|artifact|governance|audit):/);
      const one = await yard(['branch:create', '--help'], { cwd: repo.root });
      assert.equal(one.code, 0);
      assert.match(one.stdout, /--base\s+branch, tag or commit to start from \(default "main"\)/);
      assert.match(one.stdout, /--checkout\s+.*\(default false\)/);
    });

    test('a real process: exit code, JSON on stdout, errors as JSON on stderr, and one audit line each', async () => {
      const before = (await auditLines(repo.root)).length;
      const ok = await yardProcess(['artifact:write', '--feature-slug', SLUG, '--relative-path', 'piped.md', '--output', 'json'], {
        cwd: repo.root,
        stdin: 'piped through stdin\n',
      });
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(ok.json<{ size_bytes: number }>().size_bytes, 20);
      const missing = await yardProcess(['audit:verify', '--feature-slug', 'nope', '--output', 'json'], { cwd: repo.root });
      assert.equal(missing.code, 3);
      assert.equal(missing.stdout, '');
      assert.deepEqual(Object.keys(JSON.parse(missing.stderr).error).slice(0, 2), ['code', 'message']);
      const lines = await auditLines(repo.root);
      assert.equal(lines.length, before + 2);
      assert.deepEqual(
        lines.slice(-2).map((l) => l.exit_code),
        [0, 3],
      );
    });

    test('20 parallel yard processes write 20 intact lines and the chain verifies', async () => {
      const before = (await auditLines(repo.root)).length;
      const runs = await Promise.all(
        Array.from({ length: 20 }, (_, i) => yardProcess(['branch:list', '--output', 'json', '--actor', `p${i}`], { cwd: repo.root })),
      );
      for (const r of runs) assert.equal(r.code, 0, r.stderr);
      const text = await readFile(join(repo.root, '.agileplus', 'audit.jsonl'), 'utf8');
      assert.ok(text.endsWith('\n'));
      const lines = await auditLines(repo.root);
      assert.equal(lines.length, before + 20);
      assert.deepEqual(
        lines
          .slice(-20)
          .map((l) => l.actor)
          .sort(),
        Array.from({ length: 20 }, (_, i) => `p${i}`).sort(),
      );
      const log = await SubcommandAuditLog.open(repo.root);
      try {
        assert.equal((await log.verify()).valid, true);
      } finally {
        await log.close();
      }
    });
  });
});
