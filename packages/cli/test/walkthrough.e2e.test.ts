/**
 * The README's walkthrough, run as written: a temporary repository with a bare remote and the
 * fixture files, then exactly the `$ yard …` lines between the README's walkthrough markers,
 * every gate at its default. It ends with the feature through SHIPPED (and RETROSPECTED), the
 * remote's main holding both work packages, the artifacts written and the audit chains
 * verifying with audit-chain's own verifier. A second test refuses a conflicting ship and finds
 * the repository as it was.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { verifyFile, verifyJsonl } from '@switchyard/audit-chain';
import { type TempRepo, tempRepo, yard } from './helpers.js';

const README = fileURLToPath(new URL('../README.md', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/walkthrough/', import.meta.url));
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups) await cleanup();
});

/** The `$ yard …` lines of the README's walkthrough block, split into arguments as a shell would (quotes only). */
async function walkthroughCommands(): Promise<string[][]> {
  const text = await readFile(README, 'utf8');
  const block = /<!-- walkthrough:start -->([\s\S]*?)<!-- walkthrough:end -->/.exec(text);
  assert.ok(block, 'the README has a walkthrough block');
  return block[1]!
    .split('\n')
    .filter((line) => line.startsWith('$ yard '))
    .map((line) => [...line.slice('$ yard '.length).matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!));
}

/** The README's setup: a repository on main with the fixture files, pushed to a bare remote. */
async function setup(): Promise<{ repo: TempRepo; remote: string }> {
  const repo = await tempRepo('yard-walk-');
  const remoteDir = await mkdtemp(join(tmpdir(), 'yard-remote-'));
  cleanups.push(repo.cleanup, () => rm(remoteDir, { recursive: true, force: true }));
  const remote = join(remoteDir, 'shop.git');
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', remote]);
  repo.git('remote', 'add', 'origin', remote);
  await cp(FIXTURE, repo.root, { recursive: true });
  repo.git('add', '-A');
  repo.git('commit', '--quiet', '-m', 'start');
  repo.git('push', '--quiet', '-u', 'origin', 'main');
  return { repo, remote };
}

async function run(repo: TempRepo, args: string[]) {
  const r = await yard(args, { cwd: repo.root });
  assert.equal(r.code, 0, `yard ${args.join(' ')} exited ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  return r;
}

test('the README walkthrough: init, specify, research, plan, implement, validate, ship, retrospective, with no gate disabled', async () => {
  const commands = await walkthroughCommands();
  assert.deepEqual(
    commands.map((c) => c[0]),
    ['init', 'specify', 'research', 'plan', 'implement', 'validate', 'ship', 'retrospective', 'audit:verify'],
  );
  const { repo, remote } = await setup();
  const outputs: string[] = [];
  for (const args of commands) outputs.push((await run(repo, args)).stdout);

  const slug = '001-greeting';
  const show = (await run(repo, ['feature', 'show', slug, '--output', 'json'])).json<{
    feature: { state: string };
    work_packages: { sequence: number; state: string; depends_on: number[] }[];
  }>();
  assert.equal(show.feature.state, 'RETROSPECTED');
  assert.deepEqual(
    show.work_packages.map((w) => [w.sequence, w.state, w.depends_on]),
    [
      [1, 'DONE', []],
      [2, 'DONE', [1]],
    ],
  );
  // No gate was disabled: every built-in rule still has its default.
  const rules = (await run(repo, ['governance:list', '--output', 'json'])).json<{
    result: { enabled: boolean; default_enabled: boolean }[];
  }>();
  const list = Array.isArray(rules) ? (rules as { enabled: boolean; default_enabled: boolean }[]) : rules.result;
  assert.ok(list.length > 0 && list.every((r) => r.enabled === r.default_enabled));

  // The remote's main holds both packages' work.
  const tree = execFileSync('git', ['--git-dir', remote, 'ls-tree', '-r', '--name-only', 'main'], { encoding: 'utf8' });
  for (const file of ['src/part1.mjs', 'test/part1.test.mjs', 'src/part2.mjs', 'test/part2.test.mjs']) assert.match(tree, new RegExp(file));
  assert.equal(
    execFileSync('git', ['--git-dir', remote, 'rev-parse', 'main'], { encoding: 'utf8' }),
    repo.git('rev-parse', 'main'),
    'the remote has what was merged locally',
  );
  assert.equal(repo.git('branch', '--show-current').trim(), 'main');

  // The artifacts.
  const research = await readFile(join(repo.root, '.agileplus/artifacts', slug, 'research.md'), 'utf8');
  assert.match(research, /^# Research: Greetings \(001-greeting\)/);
  assert.match(research, /Greet people by name/);
  assert.match(research, /`src\/part1\.mjs`|src\/part1\.mjs/);
  const retro = await readFile(join(repo.root, '.agileplus/artifacts', slug, 'retrospective.md'), 'utf8');
  assert.match(retro, /\| SHIPPED \|/);
  assert.match(retro, /\| 1 \| 1 \| 0 \| DONE \|/, 'one review, approved, for package 1');
  assert.match(retro, /\| Completed \| approved \|/);

  const trail = (await run(repo, ['audit:log', '--feature-slug', slug, '--limit', '200', '--output', 'json'])).json<{
    result: { transition: string; action: string; actor: string }[];
  }>();
  const entries = Array.isArray(trail) ? (trail as { transition: string; action: string; actor: string }[]) : trail.result;
  const moves = entries.filter((e) => e.action === 'transition').map((e) => e.transition);
  for (const move of ['PLANNED -> IMPLEMENTING', 'IMPLEMENTING -> VALIDATED', 'VALIDATED -> SHIPPED', 'SHIPPED -> RETROSPECTED'])
    assert.ok(moves.includes(move), `${move} is in the trail`);
  assert.ok(entries.some((e) => e.action === 'evidence_attached' && e.actor === 'ci:local'));

  // The audit chains verify with audit-chain's verifier: the feature's (exported) and the subcommand log.
  const exported = (await run(repo, ['audit:export', '--feature-slug', slug, '--output', 'json'])).json<{
    result: { origin: string; jsonl: string };
  }>();
  const chain = 'result' in exported ? exported.result : (exported as unknown as { origin: string; jsonl: string });
  const verified = await verifyJsonl(
    (async function* () {
      yield chain.jsonl;
    })(),
    { origin: chain.origin },
  );
  assert.equal(verified.valid, true, JSON.stringify(verified));
  assert.ok(verified.entries_verified > 10);
  const log = await verifyFile(join(repo.root, '.agileplus', 'audit.jsonl'));
  assert.equal(log.valid, true, JSON.stringify(log));
  assert.match(outputs.at(-1)!, /valid|true/);
});

test('A refused ship: a conflicting merge is refused, and the repository is left clean, on its branch, with nothing moved', async () => {
  const commands = await walkthroughCommands();
  const { repo, remote } = await setup();
  for (const args of commands.slice(
    0,
    commands.findIndex((c) => c[0] === 'ship'),
  ))
    await run(repo, args);
  // Someone changes package 1's file on main meanwhile, differently, and works on a branch of their own.
  await cp(join(FIXTURE, 'lint.mjs'), join(repo.root, 'src', 'part1.mjs'));
  repo.git('add', 'src/part1.mjs');
  repo.git('commit', '--quiet', '-m', 'a conflicting part1 on main');
  repo.git('checkout', '--quiet', '-b', 'side');
  const mainBefore = repo.git('rev-parse', 'main');
  const remoteBefore = execFileSync('git', ['--git-dir', remote, 'rev-parse', 'main'], { encoding: 'utf8' });

  const r = await yard(['ship', '001-greeting', '--output', 'json'], { cwd: repo.root });
  assert.equal(r.code, 5, r.stderr);
  const error = JSON.parse(r.stderr) as { error: { code: string; message: string; details: { reason: string; files: string[] } } };
  assert.equal(error.error.code, 'conflict');
  assert.equal(error.error.details.reason, 'merge_conflict');
  assert.deepEqual(error.error.details.files, ['src/part1.mjs']);

  assert.equal(repo.git('branch', '--show-current').trim(), 'side', 'still on the branch it was on');
  assert.equal(repo.git('status', '--porcelain', '--untracked-files=no'), '', 'no tracked change left behind');
  assert.equal(repo.git('rev-parse', 'main'), mainBefore, 'main did not move');
  assert.equal(execFileSync('git', ['--git-dir', remote, 'rev-parse', 'main'], { encoding: 'utf8' }), remoteBefore, 'nothing pushed');
  assert.ok(!existsSync(join(repo.root, '.worktrees', '001-greeting-ship')), 'the merge worktree is gone');
  assert.doesNotMatch(repo.git('worktree', 'list'), /001-greeting-ship/);
  const state = (await run(repo, ['feature', 'show', '001-greeting', '--output', 'json'])).json<{ feature: { state: string } }>();
  assert.equal(state.feature.state, 'VALIDATED');
});
