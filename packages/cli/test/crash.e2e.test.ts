/**
 * Crash safety: `yard implement` killed with SIGKILL while its agent runs
 * leaves a consistent database and a verifiable audit chain, and the next
 * `yard implement` fails the orphaned job and runs the package again
 * instead of refusing it forever ("already has job … (Running)"), stopping
 * first the agent the killed process left running. Hung up
 * (its terminal closed), it cancels the running job and stops its agent.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from '@switchyard/test-support';
import { CHILD_NODE_OPTIONS, type TempRepo, tempRepo, YARD, yardJson, yardProcess } from './helpers.js';

// Agents are plain JavaScript: they start without tsx when yard runs built.
process.env.NODE_OPTIONS = CHILD_NODE_OPTIONS;

const AGENT = fileURLToPath(new URL('./agent.mjs', import.meta.url));
const SLUG = '001-crash';
let repo: TempRepo;
const json = yardJson(() => repo.root);

before(async () => {
  repo = await tempRepo();
  await writeFile(join(repo.root, 'yard.yaml'), 'admins: ["Test User"]\n');
  await json('specify', SLUG, '--title', 'Crash', '--description', 'Survive a kill.');
  // No CI in this repository: an admin turns the CI gate off for this feature, as a team without CI would.
  await json('governance:enforce', '--feature-slug', SLUG, '--rule', 'wp-ci-before-review', '--action', 'disable', '--config', 'yard.yaml');
  await json('plan', SLUG, '--force', '--wp', 'Form');
});
after(() => repo.cleanup());

/**
 * Starts `yard implement <slug>` with an agent that writes its pid to `pidFile` and sleeps a minute. `detached`
 * puts yard in a process group of its own, so that a kill of that group takes yard down at once.
 */
function implementWithSleepingAgent(slug: string, pidFile: string, detached: boolean) {
  const child = spawn(process.execPath, [...YARD.args, 'implement', slug, '--agent-command', process.execPath, '--agent-arg', AGENT], {
    cwd: repo.root,
    env: { ...process.env, AGENT_SLEEP_MS: '60000', AGENT_PID_FILE: pidFile },
    detached,
    stdio: 'ignore',
  });
  return { child, exited: new Promise<number | null>((resolve) => child.once('exit', resolve)) };
}

/** Whether the agent has written its pid. */
const agentStarted = (pidFile: string) => existsSync(pidFile) && readFileSync(pidFile, 'utf8').length > 0;

/** Whether process `pid` still runs. A failing test must not leave it behind on the test machine: it is killed after the test. */
function watchProcess(pid: number): () => boolean {
  const runs = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  after(() => {
    if (runs()) process.kill(pid, 'SIGKILL');
  });
  return runs;
}

test('implement killed mid-job: the chain verifies, and the next implement stops the agent left running, recovers the job and finishes the package', async () => {
  // Its own process group, so the kill takes yard down at once. The agent runs in a group of its own,
  // which no kill of yard's reaches: it runs on after yard is gone, until the next yard stops it.
  const agentPid = join(repo.root, '.git', 'crash-agent.pid');
  const { child: killed, exited } = implementWithSleepingAgent(SLUG, agentPid, true);
  let running: { id: string }[] = [];
  // Running, and its package moved to DOING: the job is marked Running a moment before the review
  // loop moves the package, and a kill between the two would leave it PLANNED (also recoverable,
  // but not the mid-job state this test is about).
  await eventually(
    'the agent job to run, its package in DOING, its agent started',
    async () =>
      (running = await json<{ id: string }[]>('jobs', 'list', '--state', 'Running')).length === 1 &&
      (await json<{ state: string }[]>('wp', 'list', SLUG))[0]!.state === 'DOING' &&
      agentStarted(agentPid),
    60_000,
  );
  process.kill(-killed.pid!, 'SIGKILL');
  await exited;
  const agentRuns = watchProcess(Number(await readFile(agentPid, 'utf8')));
  assert.equal(agentRuns(), true, 'the agent outlives the yard that started it');

  const verified = await json<{ valid: boolean }>('audit:verify', '--feature-slug', SLUG);
  assert.equal(verified.valid, true);
  assert.equal((await json<{ state: string }[]>('wp', 'list', SLUG))[0]!.state, 'DOING');

  const again = await yardProcess(['implement', SLUG, '--agent-command', process.execPath, '--agent-arg', AGENT], { cwd: repo.root });
  assert.equal(again.code, 0, again.stderr);
  assert.match(
    again.stderr,
    new RegExp(`job ${running[0]!.id} failed: the process running this job stopped; its agent was still running and has been stopped`),
  );
  assert.equal(agentRuns(), false, 'the next yard stopped the agent before it ran the package again');
  const jobs = await json<{ id: string; state: string; outcome: string }[]>('jobs', 'list', '--feature', SLUG);
  assert.deepEqual(jobs.map((j) => [j.id === running[0]!.id, j.state, j.outcome]).sort(), [
    [false, 'Completed', 'approved'],
    [true, 'Failed', 'interrupted'],
  ]);
  assert.equal((await json<{ state: string }[]>('wp', 'list', SLUG))[0]!.state, 'DONE');
  assert.equal((await json<{ valid: boolean }>('audit:verify', '--feature-slug', SLUG)).valid, true);
});

test('jobs cancel of a job whose yard was killed stops the agent that yard left running', async () => {
  const slug = '003-cancel-orphan';
  await json('specify', slug, '--title', 'Orphan', '--description', 'Cancel what a killed yard left.');
  await json('governance:enforce', '--feature-slug', slug, '--rule', 'wp-ci-before-review', '--action', 'disable', '--config', 'yard.yaml');
  await json('plan', slug, '--force', '--wp', 'Form');
  const agentPid = join(repo.root, '.git', 'orphan-agent.pid');
  const { child: killed, exited } = implementWithSleepingAgent(slug, agentPid, true);
  let job: { id: string; agent_process?: { pid: number } } | undefined;
  await eventually(
    'the job to record its running agent',
    async () => {
      [job] = await json<{ id: string; agent_process?: { pid: number } }[]>('jobs', 'list', '--feature', slug, '--state', 'Running');
      return job?.agent_process !== undefined && agentStarted(agentPid);
    },
    60_000,
  );
  process.kill(-killed.pid!, 'SIGKILL');
  await exited;
  const agentRuns = watchProcess(Number(readFileSync(agentPid, 'utf8')));
  assert.equal(agentRuns(), true, 'the agent outlives the yard that started it');

  const cancelled = await yardProcess(['jobs', 'cancel', job!.id], { cwd: repo.root });
  assert.equal(cancelled.code, 0, cancelled.stderr);
  assert.match(cancelled.stdout, /cancelled; its agent, left running by a process that is gone, was stopped/);
  assert.equal(agentRuns(), false);
  assert.equal((await json<{ state: string }>('jobs', 'show', job!.id)).state, 'Cancelled');
});

test('implement hung up (its terminal closed): the running job is cancelled and its agent stopped, though it runs in a group of its own', async () => {
  const slug = '002-hangup';
  await json('specify', slug, '--title', 'Hangup', '--description', 'Stop with the terminal.');
  await json('plan', slug, '--force', '--wp', 'Form');
  const agentPid = join(repo.root, '.git', 'hangup-agent.pid');
  const { child: hungUp, exited } = implementWithSleepingAgent(slug, agentPid, false);
  await eventually('the agent to run', () => agentStarted(agentPid), 60_000);
  const pid = Number(readFileSync(agentPid, 'utf8'));
  const agentRuns = watchProcess(pid);
  hungUp.kill('SIGHUP');
  assert.equal(await exited, 1, 'implement reports the job did not complete');
  await eventually(`agent ${pid} to be gone`, () => !agentRuns());
  const jobs = await json<{ state: string }[]>('jobs', 'list', '--feature', slug);
  assert.deepEqual(
    jobs.map((j) => j.state),
    ['Cancelled'],
  );
});
