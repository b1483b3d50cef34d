/**
 * Local CI as review evidence: with no code host, the repository's checks run in the package's
 * worktree after each agent run; a red run is failing ci_output evidence, so the
 * `wp-ci-before-review` gate refuses REVIEW (audited as gate_refused) and the agent gets another
 * cycle, and a green run lets it through. Shipping through a code host (a port implementation
 * over a real bare remote): the feature branch is pushed, the pull request opened, CI polled
 * until it passes, the pull request merged and main fast-forwarded; red CI merges nothing.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { tempRepo } from '../../test/gitFixture.js';
import { makeWorkflow, satisfyFeatureGates, satisfyWorkPackageGates } from '../../test/helpers.js';
import { type AgentTask, MockAgentAdapter } from '../agents/agentAdapter.js';
import { AgentDispatcher } from '../agents/agentDispatcher.js';
import type { CiStatus } from '../agents/reviewers.js';
import { HeuristicReviewer } from '../agents/reviewers.js';
import { CheckRunner } from '../ci/checkRunner.js';
import type { WorkflowError } from '../errors.js';
import { GitRepository } from '../git/gitRepository.js';
import type { CodeHostAdapter } from '../sync/adapters.js';
import { shipFeature } from './ship.js';

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups) await c();
});

test('local CI in the worktree is the ci_output evidence: red is refused at the gate, green passes to review', async () => {
  const repo = await tempRepo('local-ci-');
  cleanups.push(repo.cleanup);
  // The repository's own check: every src file must end with a newline.
  await writeFile(
    join(repo.root, 'check.mjs'),
    "import { readdirSync, readFileSync } from 'node:fs';\nconst bad = readdirSync('src').filter((f) => !readFileSync('src/' + f, 'utf8').endsWith('\\n'));\nconsole.log(bad.join(','));\nprocess.exit(bad.length ? 1 : 0);\n",
  );
  repo.git('add', 'check.mjs');
  repo.git('commit', '--quiet', '-m', 'check');
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: 'tidy', title: 'Tidy', actor: 'alice' });
  await workflow.createWorkPackage('tidy', { title: 'Add a module', actor: 'alice' });
  const agent = new MockAgentAdapter(async (task: AgentTask) => {
    execFileSync('mkdir', ['-p', 'src', 'test'], { cwd: task.worktree });
    // The first attempt forgets the final newline; the second fixes it.
    await writeFile(join(task.worktree, 'src', 'mod.mjs'), task.attempt === 1 ? 'export const x = 1;' : 'export const x = 1;\n');
    await writeFile(join(task.worktree, 'test', 'mod.test.mjs'), `// attempt ${task.attempt}\n`);
    execFileSync('git', ['add', '-A'], { cwd: task.worktree });
    execFileSync('git', ['commit', '-q', '-m', `attempt ${task.attempt}`], { cwd: task.worktree });
    return { exit_code: 0 };
  });
  const dispatcher = new AgentDispatcher({
    workflow,
    git: new GitRepository(repo.root),
    reviewer: new HeuristicReviewer(),
    localChecks: new CheckRunner({ checks: [{ name: 'newline check', kind: 'test', run: [process.execPath, 'check.mjs'] }] }),
    adapters: [agent],
  });
  const job = await dispatcher.wait((await dispatcher.dispatch('tidy', 1)).id);
  assert.equal(job.state, 'Completed');
  assert.equal(job.review_cycles, 2);
  const ci = (await workflow.records.listEvidence('tidy', 1)).filter((e) => e.type === 'ci_output');
  assert.deepEqual(
    ci.map((e) => [e.passed, e.actor, (e.data.runs as { exit_code: number }[])[0]!.exit_code]),
    [
      [false, 'ci:local', 1],
      [true, 'ci:local', 0],
    ],
  );
  const run = (ci[1]!.data.runs as { output_hash: string; duration_ms: number; command: string[] }[])[0]!;
  assert.match(run.output_hash, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual(run.command, [process.execPath, 'check.mjs']);
  const trail = (await workflow.audit.entries('tidy')).filter((e) => e.wp_sequence === 1);
  const refused = trail.filter((e) => e.action === 'gate_refused');
  assert.equal(refused.length, 1);
  assert.deepEqual(refused[0]!.detail, { attempted: 'DOING -> REVIEW', rule_ids: ['wp-ci-before-review'] });
  assert.deepEqual(
    trail.filter((e) => e.action === 'transition').map((e) => e.transition),
    ['PLANNED -> DOING', 'DOING -> REVIEW', 'REVIEW -> DONE'],
  );
});

/** A code host over a bare repository: merging a pull request moves the base to its head, as a fast-forward. */
function bareRepoHost(remote: string, ci: CiStatus['state'][]) {
  const calls: string[] = [];
  const pulls = new Map<number, { head: string; base: string }>();
  const host: CodeHostAdapter = {
    createIssue: async () => assert.fail('not used'),
    updateIssue: async () => assert.fail('not used'),
    getIssue: async () => assert.fail('not used'),
    createPullRequest: async (input) => {
      calls.push(`pr ${input.head} -> ${input.base}`);
      pulls.set(7, { head: input.head, base: input.base });
      return { number: 7, url: 'https://code.example/pr/7' };
    },
    ciStatus: async (ref) => {
      const state = ci.shift() ?? 'success';
      calls.push(`ci ${ref.slice(0, 7)} ${state}`);
      return { state, url: null, checks: [{ context: 'build', state }] };
    },
    mergePullRequest: async (number, options) => {
      const sha = options?.sha;
      const pr = pulls.get(number)!;
      const head = execFileSync('git', ['--git-dir', remote, 'rev-parse', `refs/heads/${pr.head}`], { encoding: 'utf8' }).trim();
      assert.equal(head, sha, 'merged the head that passed CI');
      execFileSync('git', ['--git-dir', remote, 'update-ref', `refs/heads/${pr.base}`, sha!]);
      calls.push(`merge #${number}`);
      return { merged: true, sha: sha! };
    },
  };
  return { host, calls };
}

async function validatedFeature() {
  const repo = await tempRepo('ship-host-');
  const remoteDir = await mkdtemp(join(tmpdir(), 'ship-remote-'));
  cleanups.push(repo.cleanup, () => rm(remoteDir, { recursive: true, force: true }));
  const remote = join(remoteDir, 'r.git');
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', remote]);
  repo.git('remote', 'add', 'origin', remote);
  repo.git('push', '--quiet', 'origin', 'main');
  repo.git('checkout', '--quiet', '-b', 'orders/wp01');
  await writeFile(join(repo.root, 'orders.txt'), 'orders\n');
  repo.git('add', 'orders.txt');
  repo.git('commit', '--quiet', '-m', 'orders');
  repo.git('checkout', '--quiet', 'main');
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: 'orders', title: 'Orders', description: 'Keep orders.', actor: 'alice' });
  await satisfyFeatureGates(workflow, 'orders');
  await workflow.createWorkPackage('orders', { title: 'Orders file', actor: 'alice' });
  await satisfyWorkPackageGates(workflow, 'orders', 1);
  for (const to of ['DOING', 'REVIEW', 'DONE']) await workflow.transitionWorkPackage('orders', 1, { to, actor: 'alice' });
  await workflow.transitionFeature('orders', { to: 'VALIDATED', force: true, actor: 'alice' });
  return { repo, remote, workflow, git: new GitRepository(repo.root) };
}

test('ship through a code host: push the feature branch, open the PR, merge once CI passes, fast-forward main', async () => {
  const { repo, remote, workflow, git } = await validatedFeature();
  const { host, calls } = bareRepoHost(remote, ['pending', 'pending', 'success']);
  const slept: number[] = [];
  const report = await shipFeature('orders', {
    workflow,
    git,
    actor: 'alice',
    remote: 'origin',
    codeHost: host,
    ciPollIntervalMs: 1234,
    sleep: async (ms) => {
      slept.push(ms);
    },
  });
  assert.equal(report.transition.to, 'SHIPPED');
  assert.deepEqual(report.pull_request, { number: 7, url: 'https://code.example/pr/7', ci: 'success' });
  assert.deepEqual(
    calls.map((c) => c.replace(/ci \w+/, 'ci <sha>')),
    ['pr orders/feature -> main', 'ci <sha> pending', 'ci <sha> pending', 'ci <sha> success', 'merge #7'],
  );
  assert.deepEqual(slept, [1234, 1234]);
  assert.equal(repo.git('rev-parse', 'main'), execFileSync('git', ['--git-dir', remote, 'rev-parse', 'main'], { encoding: 'utf8' }));
  assert.equal(repo.git('show', 'main:orders.txt'), 'orders\n');
});

test('ship through a code host with red CI merges nothing and leaves the feature VALIDATED', async () => {
  const { repo, remote, workflow, git } = await validatedFeature();
  const { host, calls } = bareRepoHost(remote, ['failure']);
  const mainBefore = repo.git('rev-parse', 'main');
  await assert.rejects(
    shipFeature('orders', { workflow, git, actor: 'alice', remote: 'origin', codeHost: host, sleep: async () => undefined }),
    (e: WorkflowError) => e.code === 'gate_failed' && /checks failure \(build: failure\); not merged/.test(e.message),
  );
  assert.ok(!calls.some((c) => c.startsWith('merge')));
  assert.equal(repo.git('rev-parse', 'main'), mainBefore);
  assert.equal((await workflow.getFeature('orders')).state, 'VALIDATED');
});
