/**
 * The review loop with GitHub as its CI: the fake GitHub (checked against
 * GitHub's OpenAPI description) stands on a bare repository, the host's
 * storage, and reports CI only for commits pushed there, as GitHub does.
 * The loop pushes the work package's branch before reading CI for its head;
 * without a remote the job fails before the agent runs (the host could never
 * see the commit); a push git refuses fails the job and moves nothing to review.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, test } from 'node:test';
import { fakeGitHub } from '@switchyard/test-support/integrations';
import { tempRepo } from '../../../test/gitFixture.js';
import { makeWorkflow } from '../../../test/helpers.js';
import { type AgentTask, MockAgentAdapter } from '../../agents/agentAdapter.js';
import { AgentDispatcher } from '../../agents/agentDispatcher.js';
import { HeuristicReviewer } from '../../agents/reviewers.js';
import { GitRepository } from '../../git/gitRepository.js';
import { GitHubCodeHostAdapter } from './githubCodeHost.js';

const SLUG = '001-login';
const BRANCH = `${SLUG}/wp01`;
const RUN_URL = 'https://github.example/acme/shop/actions/runs/7';

const scratch = await mkdtemp(join(tmpdir(), 'github-ci-push-'));
after(() => rm(scratch, { recursive: true, force: true }));
let remoteCount = 0;

/** A repository with `origin`, a bare remote the fake GitHub reads its commits from; main pushed. */
async function hostedRepo() {
  const repo = await tempRepo();
  const remote = join(scratch, `shop-${++remoteCount}.git`);
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', remote]);
  repo.git('remote', 'add', 'origin', remote);
  repo.git('push', '--quiet', 'origin', 'main');
  const gh = await fakeGitHub({ owner: 'acme', repo: 'shop', tokens: ['ghp_personal'], repository: remote });
  // GitHub Actions runs green on every commit the host receives.
  gh.checkRuns.set('*', [{ name: 'Actions / test', status: 'completed', conclusion: 'success', html_url: RUN_URL }]);
  const host = new GitHubCodeHostAdapter({
    baseUrl: gh.url,
    owner: 'acme',
    repo: 'shop',
    auth: { type: 'token', token: 'ghp_personal' },
    allowPrivateHosts: ['127.0.0.1'],
    retries: 0,
  });
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: SLUG, title: 'Login', description: 'Passkeys.', actor: 'alice' });
  await workflow.createWorkPackage(SLUG, { title: 'Login form', actor: 'alice' });
  const heads: string[] = [];
  const agent = new MockAgentAdapter(async (task: AgentTask) => {
    await writeFile(join(task.worktree, 'login.ts'), `export const attempt = ${task.attempt};\n`);
    await writeFile(join(task.worktree, 'login.test.ts'), '// covered\n');
    execFileSync('git', ['add', '-A'], { cwd: task.worktree });
    execFileSync('git', ['commit', '-q', '-m', `attempt ${task.attempt}`], { cwd: task.worktree });
    heads.push(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: task.worktree, encoding: 'utf8' }).trim());
    return { exit_code: 0, output: 'done\n' };
  });
  const cleanup = async () => {
    await gh.close();
    await repo.cleanup();
  };
  /** The dispatcher with GitHub as its CI, pushing to what `ciRemote` names. */
  const dispatcher = (ciRemote: string | undefined) =>
    new AgentDispatcher({
      workflow,
      git: new GitRepository(repo.root),
      reviewer: new HeuristicReviewer(),
      ciSource: host,
      ciRemote: async () => ciRemote,
      adapters: [agent],
    });
  return { repo, remote, gh, workflow, heads, dispatcher, cleanup };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const remoteHead = (remote: string, ref: string) =>
  execFileSync('git', ['--git-dir', remote, 'rev-parse', '--verify', '--quiet', ref], { encoding: 'utf8' }).trim();

test('with a remote, the package branch is pushed before its CI is read: GitHub reports the checks of the pushed commit', async () => {
  const setting = await hostedRepo();
  const { remote, gh, workflow, heads } = setting;
  cleanups.push(setting.cleanup);
  const dispatcher = setting.dispatcher('origin');
  const events: Record<string, unknown>[] = [];
  workflow.events.on('workflow:agent_event', (e) => {
    if (e.kind === 'ci') events.push(e.data);
  });
  const job = await dispatcher.dispatch(SLUG, 1, { review_cycles: 1 });
  const done = await dispatcher.wait(job.id);
  assert.equal(done.outcome, 'approved', JSON.stringify(done));
  assert.equal((await workflow.getWorkPackage(SLUG, 1)).state, 'DONE');
  const head = heads[0]!;
  assert.equal(remoteHead(remote, `refs/heads/${BRANCH}`), head, 'the remote holds the package branch at the agent commit');
  // Every CI read asked for that commit, and the host had it.
  assert.ok(gh.ciReads.length >= 2);
  for (const read of gh.ciReads) assert.deepEqual([read.ref, read.commit], [head, head]);
  assert.deepEqual(gh.violations, []);
  assert.deepEqual(events[0], { cycle: 1, state: 'pushed', remote: 'origin', branch: BRANCH, commit: head });
  const ci = (await workflow.records.listEvidence(SLUG, 1)).find((e) => e.type === 'ci_output');
  assert.ok(ci);
  assert.equal(ci.passed, true);
  assert.equal(ci.reference, RUN_URL);
  assert.deepEqual({ commit: ci.data?.commit, pushed: ci.data?.pushed }, { commit: head, pushed: { remote: 'origin', branch: BRANCH } });
  const trail = (await workflow.audit.entries(SLUG)).filter((e) => e.action === 'transition').map((e) => e.transition);
  assert.ok(trail.includes('DOING -> REVIEW') && trail.includes('REVIEW -> DONE'), trail.join(', '));
});

test('without a remote the job fails before the agent runs, saying what to add: GitHub is never asked about a commit it cannot have', async () => {
  const setting = await hostedRepo();
  const { remote, gh, workflow, heads } = setting;
  cleanups.push(setting.cleanup);
  const dispatcher = setting.dispatcher(undefined);
  const done = await dispatcher.wait((await dispatcher.dispatch(SLUG, 1, { review_cycles: 1 })).id);
  assert.equal(done.state, 'Failed');
  assert.match(
    done.error ?? '',
    /^the code host runs CI only on commits pushed to it, and this repository has no remote to push 001-login\/wp01 to: add one \(git remote add origin /,
  );
  assert.deepEqual(heads, [], 'the agent did not run');
  assert.equal((await workflow.getWorkPackage(SLUG, 1)).state, 'PLANNED', 'nothing moved');
  assert.throws(() => remoteHead(remote, `refs/heads/${BRANCH}`), 'the branch never reached the remote');
  assert.deepEqual(gh.ciReads, []);
  assert.deepEqual(gh.violations, []);
});

test('a push git refuses (the remote branch moved on) fails the job; the package never reaches review', async () => {
  const setting = await hostedRepo();
  const { repo, remote, workflow } = setting;
  cleanups.push(setting.cleanup);
  // Someone else pushed a commit of their own to the package's branch meanwhile.
  const commit = repo.git('commit-tree', 'HEAD^{tree}', '-p', 'HEAD', '-m', 'theirs').trim();
  repo.git('push', '--quiet', 'origin', `${commit}:refs/heads/${BRANCH}`);
  const theirs = remoteHead(remote, `refs/heads/${BRANCH}`);
  const dispatcher = setting.dispatcher('origin');
  const done = await dispatcher.wait((await dispatcher.dispatch(SLUG, 1, { review_cycles: 1 })).id);
  assert.equal(done.state, 'Failed');
  assert.match(done.error ?? '', /pushing 001-login\/wp01 \([0-9a-f]{12}\) to origin, for the code host to run its CI, failed/);
  assert.equal(remoteHead(remote, `refs/heads/${BRANCH}`), theirs, 'their commit is not overwritten');
  assert.equal((await workflow.getWorkPackage(SLUG, 1)).state, 'DOING');
  assert.equal((await workflow.records.listEvidence(SLUG, 1)).filter((e) => e.type === 'ci_output').length, 0);
});
