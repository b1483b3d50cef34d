import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, afterEach, beforeEach, test } from 'node:test';
import { chatAnswer, fakeServer } from '../../test/fakeServer.js';
import { tempRepo } from '../../test/gitFixture.js';
import { makeWorkflow } from '../../test/helpers.js';
import type { AgentEvent } from '../events.js';
import { GitRepository } from '../git/gitRepository.js';
import { GatewayClient } from '../llm/gatewayClient.js';
import type { Workflow } from '../workflow.js';
import { type AgentTask, MockAgentAdapter } from './agentAdapter.js';
import { AgentDispatcher } from './agentDispatcher.js';
import { updateUnlessEnded } from './jobUpdates.js';
import { type CiStatusSource, HeuristicReviewer, LlmReviewer, type Reviewer } from './reviewers.js';

const verdicts: string[] = [];
const gateway = await fakeServer((_req, res) => {
  const next = verdicts.shift();
  if (next === undefined) {
    res.writeHead(500).end('no verdict queued');
    return;
  }
  chatAnswer(res, next);
});
after(() => gateway.close());
const approve = (summary = 'Looks good') => JSON.stringify({ verdict: 'approve', summary, comments: [] });
const requestChanges = (...comments: string[]) => JSON.stringify({ verdict: 'request_changes', summary: 'Needs work', comments });

const greenCi: CiStatusSource = {
  ciStatus: async () => ({ state: 'success', url: 'https://ci.example/run/1', checks: [{ context: 'test', state: 'success' }] }),
};

let repo: Awaited<ReturnType<typeof tempRepo>>;
let workflow: Workflow;
let events: AgentEvent[];
beforeEach(async () => {
  repo = await tempRepo();
  workflow = makeWorkflow().workflow;
  events = [];
  workflow.events.on('workflow:agent_event', (e) => events.push(e));
  await workflow.createFeature({ slug: '001-login', title: 'Login', description: 'Passkey login for the web app.', actor: 'alice' });
  await workflow.createWorkPackage('001-login', { title: 'Add the login form', file_scope: ['src/login.ts'], actor: 'alice' });
});
afterEach(() => repo.cleanup());

/** An agent that writes a file and a test in its worktree and commits them. */
function committingAgent(withTest = true) {
  return new MockAgentAdapter(async (task: AgentTask) => {
    await writeFile(join(task.worktree, 'login.ts'), `export const attempt = ${task.attempt};\n`);
    if (withTest) await writeFile(join(task.worktree, 'login.test.ts'), `// attempt ${task.attempt}\n`);
    execFileSync('git', ['add', '-A'], { cwd: task.worktree });
    execFileSync('git', ['commit', '-q', '-m', `login attempt ${task.attempt}`], { cwd: task.worktree });
    return { exit_code: 0, output: `worked on attempt ${task.attempt}\nPR_URL=https://code.example/pr/${task.attempt}\n` };
  });
}

function dispatcher(
  agent: MockAgentAdapter,
  reviewer: Reviewer = new LlmReviewer(new GatewayClient({ baseUrl: gateway.url, model: 'reviewer' })),
) {
  return new AgentDispatcher({ workflow, git: new GitRepository(repo.root), reviewer, ciSource: greenCi, adapters: [agent] });
}

const wpTrail = async () =>
  (await workflow.audit.entries('001-login'))
    .filter((e) => e.action === 'transition' && e.wp_sequence === 1)
    .map((e) => `${e.transition} by ${e.actor}`);

test('approve: the agent runs once, the LLM approves, REVIEW -> DONE is audited', async () => {
  verdicts.push(approve());
  const agent = committingAgent();
  const d = dispatcher(agent);
  const jobStates: string[] = [];
  workflow.events.on('workflow:agent_job', (e) => jobStates.push(e.state));
  const job = await d.dispatch('001-login', 1, { review_cycles: 3 });
  assert.match(job.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(job.state, 'Pending');
  const done = await d.wait(job.id);
  assert.deepEqual([done.state, done.outcome, done.review_cycles], ['Completed', 'approved', 1]);
  assert.equal(done.result?.commits.length, 1);
  assert.equal(done.result?.pr_url, 'https://code.example/pr/1');
  assert.deepEqual(jobStates, ['Pending', 'Running', 'Completed']);
  const wp = await workflow.getWorkPackage('001-login', 1);
  assert.deepEqual([wp.state, wp.agent_id, wp.pr_url], ['DONE', job.id, 'https://code.example/pr/1']);
  assert.deepEqual(await wpTrail(), ['PLANNED -> DOING by agent:mock', 'DOING -> REVIEW by agent:mock', 'REVIEW -> DONE by reviewer:llm']);
  const reviewRequest = gateway.requests.at(-1)!.json as { messages: { content: string }[] };
  assert.match(reviewRequest.messages[1]!.content, /\+export const attempt = 1;/, 'the reviewer sees the diff');
  assert.match(reviewRequest.messages[1]!.content, /CI: success/);
  assert.deepEqual([...new Set(events.map((e) => e.kind))].sort(), ['cycle', 'output', 'review', 'status', 'transition']);
  assert.ok(events.some((e) => e.kind === 'output' && String(e.data.chunk).includes('worked on attempt 1')));
  assert.equal((await workflow.audit.verify('001-login')).valid, true);
  assert.equal(agent.tasks[0]!.worktree, join(repo.root, '.worktrees', '001-login-wp01'));
});

test('request changes, then approve: the feedback reaches the agent on the second cycle', async () => {
  verdicts.push(requestChanges('Handle an empty password.', 'Add a test for lockout.'), approve());
  const agent = committingAgent();
  const d = dispatcher(agent);
  const finished = await d.wait((await d.dispatch('001-login', 1, { review_cycles: 3 })).id);
  assert.deepEqual([finished.state, finished.outcome, finished.review_cycles], ['Completed', 'approved', 2]);
  assert.equal(agent.tasks.length, 2);
  assert.match(agent.tasks[1]!.context, /Reviewer feedback from cycle 1:\n- Handle an empty password.\n- Add a test for lockout./);
  assert.deepEqual(await wpTrail(), [
    'PLANNED -> DOING by agent:mock',
    'DOING -> REVIEW by agent:mock',
    'REVIEW -> DOING by reviewer:llm',
    'DOING -> REVIEW by agent:mock',
    'REVIEW -> DONE by reviewer:llm',
  ]);
  const reviews = events.filter((e) => e.kind === 'review').map((e) => e.data.approved);
  assert.deepEqual(reviews, [false, true]);
});

test('exhaustion: no approval within N cycles leaves the package BLOCKED, audited', async () => {
  verdicts.push(requestChanges('Wrong approach.'), requestChanges('Still wrong.'));
  const agent = committingAgent();
  const d = dispatcher(agent);
  const job = await d.dispatch('001-login', 1, { review_cycles: 2 });
  const finished = await d.wait(job.id);
  assert.deepEqual([finished.state, finished.outcome, finished.review_cycles], ['Failed', 'review_exhausted', 2]);
  assert.equal((await workflow.getWorkPackage('001-login', 1)).state, 'BLOCKED');
  assert.deepEqual((await wpTrail()).slice(-2), ['REVIEW -> DOING by reviewer:llm', 'DOING -> BLOCKED by workflow:review-loop']);
  assert.equal((await workflow.audit.verify('001-login')).valid, true);
});

test('the heuristic reviewer asks for tests, the agent adds them, then it approves', async () => {
  let attempt = 0;
  const agent = new MockAgentAdapter(async (task) => {
    attempt++;
    await writeFile(join(task.worktree, 'login.ts'), `export const v = ${attempt};\n`);
    if (task.context.includes('no test was added')) await writeFile(join(task.worktree, 'login.test.ts'), 'ok\n');
    execFileSync('git', ['add', '-A'], { cwd: task.worktree });
    execFileSync('git', ['commit', '-q', '-m', `attempt ${attempt}`], { cwd: task.worktree });
    return { exit_code: 0 };
  });
  const d = dispatcher(agent, new HeuristicReviewer());
  const finished = await d.wait((await d.dispatch('001-login', 1, { review_cycles: 3 })).id);
  assert.deepEqual([finished.outcome, finished.review_cycles], ['approved', 2]);
  const firstReview = events.find((e) => e.kind === 'review')!;
  assert.equal(firstReview.data.reviewer, 'heuristic');
  assert.match(String((firstReview.data.comments as string[])[0]), /no test was added/);
});

test('an agent that fails blocks the package; a job can be cancelled; one active job per package', async () => {
  const failing = new MockAgentAdapter(async () => ({ exit_code: 3, output: 'boom' }));
  const d = dispatcher(failing);
  const job = await d.dispatch('001-login', 1);
  await assert.rejects(d.dispatch('001-login', 1), /already has job/);
  const failed = await d.wait(job.id);
  assert.deepEqual([failed.state, failed.outcome, failed.result?.exit_code], ['Failed', 'agent_failed', 3]);
  assert.equal((await workflow.getWorkPackage('001-login', 1)).state, 'BLOCKED');

  let release: (() => void) | undefined;
  const hanging = new MockAgentAdapter(
    () =>
      new Promise((resolve) => {
        release = () => resolve({ exit_code: 0 });
      }),
  );
  const d2 = dispatcher(hanging);
  const slow = await d2.dispatch('001-login', 1);
  while (release === undefined) await new Promise((r) => setImmediate(r));
  const cancelling = d2.cancel(slow.id);
  release();
  const cancelled = await cancelling;
  assert.equal(cancelled.state, 'Cancelled');
  assert.deepEqual(
    (await d2.list({ featureSlug: '001-login' })).map((j) => j.state),
    ['Failed', 'Cancelled'],
  );
  await assert.rejects(d2.get('00000000-0000-4000-8000-000000000000'), /does not exist/);
});

test('two dispatches at once for one package (two processes, two servers): one job starts, the other is a conflict', async () => {
  let release: (() => void) | undefined;
  const hanging = new MockAgentAdapter(
    () =>
      new Promise((resolve) => {
        release = () => resolve({ exit_code: 3 });
      }),
  );
  // Two dispatchers over one store stand for two `yard implement` processes sharing the database.
  const [a, b] = [dispatcher(hanging), dispatcher(hanging)];
  const outcomes = await Promise.allSettled([a.dispatch('001-login', 1), b.dispatch('001-login', 1)]);
  const started = outcomes.filter((o) => o.status === 'fulfilled');
  const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
  assert.equal(started.length, 1);
  assert.equal(refused.length, 1);
  assert.equal(refused[0]!.reason.code, 'conflict');
  assert.equal((await workflow.store.reader.listJobs({ featureSlug: '001-login' })).length, 1);
  while (release === undefined) await new Promise((r) => setImmediate(r));
  release();
  await a.wait((started[0] as PromiseFulfilledResult<{ id: string }>).value.id);
  await b.wait((started[0] as PromiseFulfilledResult<{ id: string }>).value.id);
});

test('a job another process cancelled stays Cancelled when its agent then fails; cancelling an ended job changes nothing', async () => {
  let release: (() => void) | undefined;
  const hanging = new MockAgentAdapter(
    () =>
      new Promise((resolve) => {
        release = () => resolve({ exit_code: 3 });
      }),
  );
  const d = dispatcher(hanging);
  const job = await d.dispatch('001-login', 1);
  while (release === undefined) await new Promise((r) => setImmediate(r));
  // What `yard jobs cancel` in another process writes; this process has not seen it yet when its agent finishes.
  const cancel = { state: 'Cancelled', outcome: 'cancelled', error: 'cancelled by bob' } as const;
  const first = await updateUnlessEnded(workflow.store, job.id, cancel);
  assert.deepEqual([first.applied, first.job.state], [true, 'Cancelled']);
  release();
  const ended = await d.wait(job.id);
  assert.deepEqual([ended.state, ended.outcome, ended.error], ['Cancelled', 'cancelled', 'cancelled by bob'], 'how it ended is kept');
  const again = await updateUnlessEnded(workflow.store, job.id, { state: 'Running' });
  assert.deepEqual([again.applied, again.job.state], [false, 'Cancelled']);
  await assert.rejects(updateUnlessEnded(workflow.store, 'no-such-job', cancel), /does not exist/);
});

test('CI is polled while pending; failing CI blocks review and becomes the next cycle’s feedback', async () => {
  verdicts.push(approve());
  const answers = ['pending', 'failure', 'pending', 'success'] as const;
  const polls: string[] = [];
  const ci: CiStatusSource = {
    ciStatus: async (ref) => {
      const state = answers[polls.length] ?? 'success';
      polls.push(`${ref.slice(0, 7)}:${state}`);
      return { state, url: `https://ci.example/${polls.length}`, checks: [{ context: 'unit', state }] };
    },
  };
  const waits: number[] = [];
  const agent = committingAgent();
  const d = new AgentDispatcher({
    workflow,
    git: new GitRepository(repo.root),
    reviewer: new LlmReviewer(new GatewayClient({ baseUrl: gateway.url, model: 'reviewer' })),
    ciSource: ci,
    ciPollIntervalMs: 250,
    sleep: async (ms) => {
      waits.push(ms);
    },
    adapters: [agent],
  });
  const finished = await d.wait((await d.dispatch('001-login', 1, { review_cycles: 3 })).id);
  assert.deepEqual([finished.outcome, finished.review_cycles], ['approved', 2]);
  assert.equal(polls.length, 4);
  assert.deepEqual(waits, [250, 250]);
  assert.match(agent.tasks[1]!.context, /ci_output evidence for work package 1 of 001-login failed/);
  const ciEvidence = (await workflow.records.listEvidence('001-login', 1)).filter((e) => e.type === 'ci_output');
  assert.deepEqual(
    ciEvidence.map((e) => e.passed),
    [false, true],
  );
  assert.deepEqual((await wpTrail()).slice(0, 2), ['PLANNED -> DOING by agent:mock', 'DOING -> REVIEW by agent:mock']);
});
