/**
 * `yard implement` with GitHub as the code host: the review loop pushes the
 * work package's branch to the repository's remote (`origin`) before it
 * reads the package's CI, so GitHub has the commit it reports checks for.
 * The fake GitHub (checked against GitHub's OpenAPI description) stands on
 * the bare remote and reports CI only for commits pushed there, as GitHub
 * does. No gate is disabled: the check runs are the CI evidence. Without
 * the remote, implement refuses at once (exit 2), saying what to add.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { fakeGitHub } from '@switchyard/test-support/integrations';
import { openRuntime } from '../src/runtime.js';
import { type TempRepo, tempRepo, yard, yardJson } from './helpers.js';

const AGENT = fileURLToPath(new URL('./fixtures/walkthrough/agent.mjs', import.meta.url));
const SLUG = '001-hosted';
const RUN_URL = 'https://github.example/acme/shop/actions/runs/11';
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups) await cleanup();
});

/** `yard.yaml` with the fake GitHub at `ghUrl` as the code host (acme/shop), plus `extra` lines. */
function writeConfig(root: string, ghUrl: string, extra: string[] = []): Promise<void> {
  const lines = ['admins: ["Test User"]', 'code_host:', '  owner: acme', '  repo: shop', '  token: ghp_personal', `  base_url: ${ghUrl}`];
  return writeFile(join(root, 'yard.yaml'), [...lines, '  allow_private_hosts: ["127.0.0.1"]', ...extra, ''].join('\n'));
}

test('with GitHub and a remote, implement pushes the package branch before reading its check runs; the package ends DONE', {
  timeout: 240_000,
}, async () => {
  const repo: TempRepo = await tempRepo('yard-hosted-');
  cleanups.push(repo.cleanup);
  const remoteDir = await mkdtemp(join(tmpdir(), 'yard-hosted-remote-'));
  cleanups.push(() => rm(remoteDir, { recursive: true, force: true }));
  const remote = join(remoteDir, 'shop.git');
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', remote]);
  // The walkthrough's agent writes src/part1.mjs and test/part1.test.mjs and commits them.
  await mkdir(join(repo.root, 'test'));
  await writeFile(join(repo.root, 'test', '.keep'), '');
  repo.git('add', '-A');
  repo.git('commit', '--quiet', '-m', 'test dir');
  repo.git('remote', 'add', 'origin', remote);
  repo.git('push', '--quiet', 'origin', 'main');

  const gh = await fakeGitHub({ owner: 'acme', repo: 'shop', tokens: ['ghp_personal'], repository: remote });
  cleanups.push(gh.close);
  gh.checkRuns.set('*', [{ name: 'Actions / test', status: 'completed', conclusion: 'success', html_url: RUN_URL }]);
  await writeConfig(repo.root, gh.url);
  const json = yardJson(() => repo.root);
  await json('specify', SLUG, '--title', 'Hosted', '--description', 'Greet, checked by GitHub Actions.', '--config', 'yard.yaml');
  await json('plan', SLUG, '--force', '--wp', 'Hello', '--config', 'yard.yaml');

  const r = await yard(
    ['implement', SLUG, '--agent-command', process.execPath, '--agent-arg', AGENT, '--max-review-cycles', '1', '--config', 'yard.yaml'],
    { cwd: repo.root, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
  );
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  const tip = repo.git('rev-parse', `${SLUG}/wp01`).trim();
  assert.match(r.stderr, new RegExp(`\\[${SLUG} wp1\\] pushed ${SLUG}/wp01 \\(${tip.slice(0, 12)}\\) to origin for its CI`));
  assert.equal(
    execFileSync('git', ['--git-dir', remote, 'rev-parse', `refs/heads/${SLUG}/wp01`], { encoding: 'utf8' }).trim(),
    tip,
    'the remote has the package branch at the agent commit',
  );
  // GitHub was asked about that commit only, and had it each time.
  assert.ok(gh.ciReads.length >= 2);
  for (const read of gh.ciReads) assert.deepEqual([read.ref, read.commit], [tip, tip]);
  assert.deepEqual(gh.violations, []);
  const wp = (await json<{ state: string }[]>('wp', 'list', SLUG, '--config', 'yard.yaml'))[0]!;
  assert.equal(wp.state, 'DONE');
  const rt = await openRuntime(
    { verbose: 0, output: 'json', config: 'yard.yaml' },
    {
      stdout() {},
      stderr() {},
      readStdin: async () => Buffer.alloc(0),
      stdinIsTTY: false,
      env: {},
      cwd: repo.root,
    },
  );
  try {
    const ci = (await rt.workflow.records.listEvidence(SLUG, 1)).filter((e) => e.type === 'ci_output');
    assert.deepEqual(
      ci.map((e) => [e.reference, e.passed, e.actor, e.data?.commit, e.data?.pushed]),
      [[RUN_URL, true, 'ci', tip, { remote: 'origin', branch: `${SLUG}/wp01` }]],
    );
  } finally {
    await rt.close();
  }
});

test('with GitHub but no remote, implement refuses before any agent runs (exit 2), naming the remote to add', {
  timeout: 120_000,
}, async () => {
  const repo: TempRepo = await tempRepo('yard-hosted-no-remote-');
  cleanups.push(repo.cleanup);
  const gh = await fakeGitHub({ owner: 'acme', repo: 'shop', tokens: ['ghp_personal'] });
  cleanups.push(gh.close);
  await writeConfig(repo.root, gh.url);
  const json = yardJson(() => repo.root);
  await json('specify', SLUG, '--title', 'Hosted', '--description', 'Greet, checked by GitHub Actions.', '--config', 'yard.yaml');
  await json('plan', SLUG, '--force', '--wp', 'Hello', '--config', 'yard.yaml');
  const implement = () =>
    yard(['implement', SLUG, '--agent-command', process.execPath, '--agent-arg', AGENT, '--config', 'yard.yaml', '--output', 'json'], {
      cwd: repo.root,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });

  const r = await implement();
  assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`);
  const error = (JSON.parse(r.stderr) as { error: { code: string; message: string } }).error;
  assert.equal(error.code, 'invalid_argument');
  assert.match(
    error.message,
    /^code_host \(acme\/shop\) runs CI on each work package's branch pushed to the repository's remote, and this repository has no origin \(it has none\): add it \(git remote add origin http:\/\/127\.0\.0\.1:\d+\/acme\/shop\.git\), set ci\.remote/,
  );

  // A ci.remote the repository does not have is named as such.
  await writeConfig(repo.root, gh.url, ['ci:', '  remote: upstream']);
  const named = await implement();
  assert.equal(named.code, 2, `${named.stdout}\n${named.stderr}`);
  assert.match(
    named.stderr,
    /ci\.remote names the remote upstream, which this repository does not have \(it has none\): add it \(git remote add upstream /,
  );

  // Ship with the code host and nowhere to push would merge locally and open no pull request: refused too.
  await writeConfig(repo.root, gh.url);
  const ship = await yard(['ship', SLUG, '--config', 'yard.yaml', '--output', 'json'], { cwd: repo.root });
  assert.equal(ship.code, 2, `${ship.stdout}\n${ship.stderr}`);
  assert.match(
    JSON.parse(ship.stderr).error.message,
    /^code_host \(acme\/shop\) ships by pushing the target branch and opening a pull request, and this repository has no remote to push to: add it \(git remote add origin http:\/\/127\.0\.0\.1:\d+\/acme\/shop\.git\), pass --remote, or pass --no-push/,
  );
  // --no-push asks for the local merge: the remote check stands aside (the feature is not ready to ship yet).
  const local = await yard(['ship', SLUG, '--no-push', '--config', 'yard.yaml', '--output', 'json'], { cwd: repo.root });
  assert.doesNotMatch(local.stderr, /no remote to push to|unknown option/);

  // Sync with no code host configured names the section to add.
  await writeFile(join(repo.root, 'bare.yaml'), 'admins: ["Test User"]\n');
  const sync = await yard(['sync', 'push', SLUG, '--system', 'code_host', '--config', 'bare.yaml', '--output', 'json'], { cwd: repo.root });
  assert.equal(sync.code, 2, sync.stderr);
  assert.match(JSON.parse(sync.stderr).error.message, /^no code host is configured: add a code_host section \(owner, repo, and token/);

  // Nothing ran and nothing moved: GitHub was never asked, the feature and its package are where they were.
  assert.deepEqual(gh.calls, []);
  assert.equal((await json<{ feature: { state: string } }>('feature', 'show', SLUG, '--config', 'yard.yaml')).feature.state, 'PLANNED');
  assert.equal((await json<{ state: string }[]>('wp', 'list', SLUG, '--config', 'yard.yaml'))[0]!.state, 'PLANNED');
  assert.deepEqual(await json<unknown[]>('jobs', 'list', '--config', 'yard.yaml'), []);
});
