/**
 * The specification's subcommand arguments do what they say, in a temporary repository with a
 * local bare remote: `--author`, `--files`, `--allow-empty` on amend, `--message` on fixup,
 * `--stat` and `--unified`, `--pattern` and `--remote` on branches, `worktree:add` with and
 * without `--wp-id`, `governance:enforce` for one feature, `governance:check --verbose`,
 * `audit:log --actor` and `--output`.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { tempRepo } from '../../test/gitFixture.js';
import { makeWorkflow } from '../../test/helpers.js';
import { ArtifactStore } from '../git/artifactStore.js';
import { GitRepository } from '../git/gitRepository.js';
import type { Workflow } from '../workflow.js';
import {
  BUILTIN_SUBCOMMANDS,
  DispatchTool,
  EXIT_CODES,
  type InvokedSubcommand,
  invokeSubcommand,
  SubcommandAuditLog,
  type SubcommandContext,
  SubcommandRegistry,
} from './index.js';

const exec = promisify(execFile);
const registry = new SubcommandRegistry(BUILTIN_SUBCOMMANDS);

describe('the specification arguments at work', () => {
  let repo: Awaited<ReturnType<typeof tempRepo>>;
  let remoteDir: string;
  let log: SubcommandAuditLog;
  let workflow: Workflow;
  let ctx: SubcommandContext;
  /** The fixture's second commit: it changes line 4 of a 9-line README. */
  let readmeCommit: string;
  const git = (...args: string[]) => exec('git', args, { cwd: repo.root }).then((r) => r.stdout);
  const call = (command: string, args: Record<string, unknown>, actor = 'alice'): Promise<InvokedSubcommand> =>
    invokeSubcommand(registry, log, command, args, { ...ctx, actor });
  const ok = async (command: string, args: Record<string, unknown>, actor?: string) => {
    const outcome = await call(command, args, actor);
    assert.equal(outcome.exit_code, EXIT_CODES.ok, `${command}: ${JSON.stringify(outcome.error)}`);
    return outcome;
  };

  before(async () => {
    repo = await tempRepo();
    remoteDir = await mkdtemp(join(tmpdir(), 'workflow-remote-'));
    await exec('git', ['init', '--bare', '-q', '-b', 'main', remoteDir]);
    await git('remote', 'add', 'origin', remoteDir);
    await git('push', '-q', 'origin', 'main');
    readmeCommit = (await git('rev-parse', 'HEAD')).trim();
    log = await SubcommandAuditLog.open(repo.root, { repoName: 'demo' });
    ({ workflow } = makeWorkflow());
    for (const slug of ['f1', 'f2']) {
      await workflow.createFeature({ slug, title: slug, actor: 'alice' });
      await workflow.advance(slug, 'specify', { actor: 'alice' });
      await workflow.createWorkPackage(slug, { title: 'wp', actor: 'alice' });
      await workflow.transitionWorkPackage(slug, 1, { to: 'DOING', actor: 'alice' });
    }
    ctx = {
      workflow,
      git: new GitRepository(repo.root),
      artifacts: new ArtifactStore(join(repo.root, '.agileplus', 'artifacts')),
      actor: 'alice',
    };
    await new GitRepository(repo.root).excludeFromStatus('/.agileplus/');
  });
  after(async () => {
    await log.close();
    await repo.cleanup();
    await rm(remoteDir, { recursive: true, force: true });
  });

  test('commit:create --author sets the author; --files stages only those; --paths still works, with a warning', async () => {
    await writeFile(join(repo.root, 'a.txt'), 'a\n');
    await writeFile(join(repo.root, 'b.txt'), 'b\n');
    const created = await ok('commit:create', { message: 'add a', files: 'a.txt', author: 'Ada Lovelace <ada@example.com>' });
    assert.equal(created.warnings, undefined);
    assert.equal((await git('log', '-1', '--format=%an <%ae>|%cn')).trim().split('|')[0], 'Ada Lovelace <ada@example.com>');
    assert.deepEqual((await git('show', '--name-only', '--format=', 'HEAD')).trim().split('\n'), ['a.txt']);
    assert.match(await git('status', '--porcelain'), /\?\? b\.txt/, 'b.txt was not committed');
    const aliased = await ok('commit:create', { message: 'add b', paths: ['b.txt'] });
    assert.deepEqual(aliased.warnings, ['commit:create: paths is deprecated; use files (--paths is now --files)']);
    assert.deepEqual(aliased.audit.warnings, aliased.warnings);
    assert.deepEqual((await git('show', '--name-only', '--format=', 'HEAD')).trim().split('\n'), ['b.txt']);
    const bad = await call('commit:create', { message: 'x', author: 'nobody', allow_empty: true });
    assert.deepEqual([bad.exit_code, bad.error?.details], [EXIT_CODES.usage, { field: 'author' }]);
  });

  test('commit:amend --allow-empty amends a commit its changes were taken out of; without it git refuses', async () => {
    await writeFile(join(repo.root, 'c.txt'), 'c\n');
    await ok('commit:create', { message: 'add c', files: 'c.txt' });
    await git('rm', '-q', '--cached', 'c.txt');
    await rm(join(repo.root, 'c.txt'));
    const refused = await call('commit:amend', { message: 'nothing left' });
    assert.notEqual(refused.exit_code, EXIT_CODES.ok);
    const amended = await ok('commit:amend', { message: 'nothing left', allow_empty: true });
    assert.equal((amended.result as { subject: string }).subject, 'nothing left');
    assert.equal((await git('show', '--name-only', '--format=', 'HEAD')).trim(), '');
  });

  test('commit:fixup --message puts the explanation in the body under the fixup! subject', async () => {
    await writeFile(join(repo.root, 'a.txt'), 'a2\n');
    await ok('commit:fixup', { target: 'HEAD~1', message: 'typo in a' });
    const body = await git('log', '-1', '--format=%B');
    assert.match(body, /^fixup! add b\n\ntypo in a\n/);
  });

  test('diff:show --stat gives the diffstat; --unified sets the context lines; --context is its deprecated alias', async () => {
    const stat = await ok('diff:show', { from: 'HEAD~1', to: 'HEAD', stat: true });
    assert.match((stat.result as { diff: string }).diff, /^ a\.txt \| 2 \+-\n 1 file changed, 1 insertion\(\+\), 1 deletion\(-\)\n$/);
    const readme = (unified: Record<string, unknown>) => ok('diff:show', { from: `${readmeCommit}~1`, to: readmeCommit, ...unified });
    const lines = (d: InvokedSubcommand) => (d.result as { diff: string }).diff.split('\n').filter((l) => l.startsWith(' ')).length;
    assert.equal(lines(await readme({})), 6, 'three lines of context on each side by default');
    assert.equal(lines(await readme({ unified: 1 })), 2);
    const aliased = await readme({ context: '0' });
    assert.deepEqual(
      [lines(aliased), aliased.warnings],
      [0, ['diff:show: context is deprecated; use unified (--context is now --unified)']],
    );
  });

  test('branch:list --pattern and --remote; branch:delete --remote deletes the branch on the remote', async () => {
    for (const name of ['feat/one', 'feat/two', 'fix/three']) await ok('branch:create', { name });
    const names = async (args: Record<string, unknown>) =>
      ((await ok('branch:list', args)).result as { name: string }[]).map((b) => b.name).sort();
    assert.deepEqual(await names({ pattern: 'feat/*' }), ['feat/one', 'feat/two']);
    assert.ok((await names({})).includes('fix/three'));
    await git('push', '-q', 'origin', 'feat/one', 'fix/three');
    assert.deepEqual(await names({ remote: true }), ['origin/feat/one', 'origin/fix/three', 'origin/main']);
    assert.deepEqual(await names({ remote: true, pattern: 'origin/feat/*' }), ['origin/feat/one']);
    const deleted = await ok('branch:delete', { name: 'feat/one', remote: 'origin' });
    assert.deepEqual(deleted.result, { name: 'feat/one', deleted: true, remote: 'origin' });
    assert.equal((await exec('git', ['branch', '--list', 'feat/one'], { cwd: remoteDir })).stdout.trim(), '', 'gone on the remote');
    assert.ok((await names({})).includes('feat/one'), 'the local branch stays');
    assert.deepEqual(await names({ remote: true }), ['origin/fix/three', 'origin/main']);
    const missing = await call('branch:delete', { name: 'feat/one', remote: 'origin' });
    assert.equal(missing.exit_code, EXIT_CODES.not_found);
    const noRemote = await call('branch:delete', { name: 'feat/two', remote: 'upstream' });
    assert.deepEqual([noRemote.exit_code, noRemote.error?.details], [EXIT_CODES.not_found, { field: 'remote' }]);
  });

  test('worktree:add takes --path and --branch; without --wp-id a plain worktree with the metadata given', async () => {
    const plain = await ok('worktree:add', { path: 'trees/spike', branch: 'spike', feature_slug: 'f1' });
    assert.deepEqual(
      [
        (plain.result as { branch: string }).branch,
        (plain.result as { feature_slug: string }).feature_slug,
        (plain.result as { wp_id: unknown }).wp_id,
      ],
      ['spike', 'f1', null],
    );
    const bare = await ok('worktree:add', { path: 'trees/bare', branch: 'bare' });
    assert.deepEqual([(bare.result as { feature_slug: unknown }).feature_slug, (bare.result as { wp_id: unknown }).wp_id], [null, null]);
    const forWp = await ok('worktree:add', { path: 'trees/f2-one', branch: 'f2-work', feature_slug: 'f2', wp_id: 'wp01' });
    assert.deepEqual([(forWp.result as { feature_slug: string }).feature_slug, (forWp.result as { wp_id: number }).wp_id], ['f2', 1]);
    const listed = (await ok('worktree:list', {})).result as { path: string; feature_slug: string | null; wp_id: number | null }[];
    assert.deepEqual(
      listed
        .filter((w) => w.path.includes('trees'))
        .map((w) => [w.path.slice(repo.root.length + 1), w.feature_slug, w.wp_id])
        .sort(),
      [
        ['trees/bare', null, null],
        ['trees/f2-one', 'f2', 1],
        ['trees/spike', 'f1', null],
      ],
    );
    const required = await call('worktree:add', { branch: 'x' });
    assert.deepEqual([required.exit_code, required.error?.details?.field], [EXIT_CODES.usage, 'path']);
    const orphanWp = await call('worktree:add', { path: 'trees/x', branch: 'x', wp_id: 1 });
    assert.deepEqual([orphanWp.exit_code, orphanWp.error?.details?.field], [EXIT_CODES.usage, 'feature_slug']);
    const legacy = await ok('legacy:worktree:add', { feature_slug: 'f1', wp: 1 });
    assert.deepEqual(
      [(legacy.result as { branch: string }).branch, (legacy.result as { path: string }).path.endsWith('.worktrees/f1-wp01')],
      ['f1/wp01', true],
    );
    assert.deepEqual(legacy.warnings, [
      'legacy:worktree:add is deprecated; use worktree:add --path P --branch B --feature-slug F --wp-id N',
    ]);
  });

  test('governance:enforce --feature-slug changes a rule for that feature alone; reset returns it to the global setting; admins only', async () => {
    const blocked = async (slug: string) =>
      (
        (await ok('governance:check', { feature_slug: slug, wp: 1, transition: 'REVIEW' })).result as { violations: { rule_id: string }[] }
      ).violations.map((v) => v.rule_id);
    assert.deepEqual(await blocked('f1'), ['wp-ci-before-review']);
    const forbidden = await call('governance:enforce', { feature_slug: 'f1', rule: 'wp-ci-before-review', action: 'disable' });
    assert.equal(forbidden.exit_code, EXIT_CODES.forbidden);
    const disabled = await ok('governance:enforce', { feature_slug: 'f1', rule: 'wp-ci-before-review', action: 'disable' }, 'lead');
    assert.deepEqual(
      [(disabled.result as { enabled: boolean }).enabled, (disabled.result as { global_enabled: boolean }).global_enabled],
      [false, true],
    );
    assert.deepEqual(await blocked('f1'), []);
    assert.deepEqual(await blocked('f2'), ['wp-ci-before-review'], 'the other feature keeps the global setting');
    // The move itself honours it, not only the check.
    await workflow.transitionWorkPackage('f1', 1, { to: 'REVIEW', actor: 'alice' });
    await assert.rejects(workflow.transitionWorkPackage('f2', 1, { to: 'REVIEW', actor: 'alice' }), { code: 'gate_failed' });
    // An alias: --rule-id is now --rule.
    const reset = await ok('governance:enforce', { feature_slug: 'f1', rule_id: 'wp-ci-before-review', action: 'reset' }, 'lead');
    assert.equal((reset.result as { override: unknown }).override, null);
    assert.deepEqual(reset.warnings, ['governance:enforce: rule_id is deprecated; use rule (--rule-id is now --rule)']);
    const rules = await workflow.governance.listRules();
    assert.equal(rules.find((r) => r.rule_id === 'wp-ci-before-review')!.enabled, true, 'the global setting never changed');
    // Enabling a rule that is off globally, for one feature.
    await ok('governance:enforce', { feature_slug: 'f2', rule: 'wp-lint-before-review', action: 'enable' }, 'lead');
    assert.deepEqual(await blocked('f2'), ['wp-ci-before-review', 'wp-lint-before-review']);
    const trail = await workflow.audit.entries('f2');
    assert.deepEqual(
      trail.filter((e) => (e as { action?: string }).action === 'rule_enforced').map((e) => [e.actor, e.transition]),
      [['lead', 'GLOBAL -> ENABLED']],
    );
  });

  test('governance:check: --transition is required (--to is its alias); --verbose lists the rules checked', async () => {
    const missing = await call('governance:check', { feature_slug: 'f2' });
    assert.deepEqual([missing.exit_code, missing.error?.message], [EXIT_CODES.usage, 'transition: required']);
    const plain = await ok('governance:check', { feature_slug: 'f2', wp: 1, to: 'REVIEW' });
    assert.equal('checked_rules' in (plain.result as object), false);
    const verbose = await ok('governance:check', { feature_slug: 'f2', wp: 1, transition: 'REVIEW', verbose: true });
    assert.deepEqual((verbose.result as { checked_rules: string[] }).checked_rules, ['wp-ci-before-review', 'wp-lint-before-review']);
    const legacy = await ok('legacy:governance:check', { feature_slug: 'f2' });
    assert.equal((legacy.result as { transition: string }).transition, 'SPECIFIED -> RESEARCHED', 'the old default: the next move');
  });

  test('audit:log --actor keeps one actor; --output markdown or table through dispatch is the rendered text', async () => {
    const byLead = (await ok('audit:log', { feature_slug: 'f2', actor: 'lead' })).result as { actor: string }[];
    assert.deepEqual(
      byLead.map((e) => e.actor),
      ['lead'],
    );
    const all = (await ok('audit:log', { feature_slug: 'f2' })).result as unknown[];
    assert.ok(all.length > byLead.length);
    const tool = new DispatchTool({ registry, log, context: ctx });
    const md = await tool.dispatch({
      command: 'dispatch_command',
      feature_slug: 'f2',
      args: { command: 'audit:log', actor: 'lead', output: 'markdown' },
    });
    assert.equal(md.ok, true, JSON.stringify(md.error));
    const text = (md.result as { text: string }).text.split('\n');
    assert.equal(text[0], '| id | timestamp | actor | wp_sequence | transition | action |');
    assert.match(text[2]!, /^\| \d+ \| .+ \| lead \| {2}\| GLOBAL -> ENABLED \| rule_enforced \|$/);
    const json = await tool.dispatch({
      command: 'dispatch_command',
      feature_slug: 'f2',
      args: { command: 'audit:log', output: 'json', limit: 2 },
    });
    assert.equal((json.result as unknown[]).length, 2);
    const bad = await tool.dispatch({ command: 'dispatch_command', feature_slug: 'f2', args: { command: 'audit:log', output: 'xml' } });
    assert.deepEqual([bad.exit_code, bad.error?.details?.field], [EXIT_CODES.usage, 'output']);
    const lines = (await readFile(log.path, 'utf8')).trim().split('\n');
    assert.equal(JSON.parse(lines.at(-1)!).command, 'audit:log');
  });
});
