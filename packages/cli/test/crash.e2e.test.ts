/**
 * Crash safety: `yard implement` killed with SIGKILL while its agent runs
 * leaves a consistent database and a verifiable audit chain, and the next
 * `yard implement` fails the orphaned job and runs the package again
 * instead of refusing it forever ("already has job … (Running)").
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
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

test('implement killed mid-job: the chain verifies, and the next implement recovers the job and finishes the package', async () => {
  // Its own process group, so the kill takes the agent with it, as a closed terminal would.
  const killed = spawn(process.execPath, [...YARD.args, 'implement', SLUG, '--agent-command', process.execPath, '--agent-arg', AGENT], {
    cwd: repo.root,
    env: { ...process.env, AGENT_SLEEP_MS: '60000' },
    detached: true,
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => killed.once('exit', resolve));
  let running: { id: string }[] = [];
  // Running, and its package moved to DOING: the job is marked Running a moment before the review
  // loop moves the package, and a kill between the two would leave it PLANNED (also recoverable,
  // but not the mid-job state this test is about).
  await eventually(
    'the agent job to run, its package in DOING',
    async () =>
      (running = await json<{ id: string }[]>('jobs', 'list', '--state', 'Running')).length === 1 &&
      (await json<{ state: string }[]>('wp', 'list', SLUG))[0]!.state === 'DOING',
    60_000,
  );
  process.kill(-killed.pid!, 'SIGKILL');
  await exited;

  const verified = await json<{ valid: boolean }>('audit:verify', '--feature-slug', SLUG);
  assert.equal(verified.valid, true);
  assert.equal((await json<{ state: string }[]>('wp', 'list', SLUG))[0]!.state, 'DOING');

  const again = await yardProcess(['implement', SLUG, '--agent-command', process.execPath, '--agent-arg', AGENT], { cwd: repo.root });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, new RegExp(`job ${running[0]!.id} failed: the process running it stopped`));
  const jobs = await json<{ id: string; state: string; outcome: string }[]>('jobs', 'list', '--feature', SLUG);
  assert.deepEqual(jobs.map((j) => [j.id === running[0]!.id, j.state, j.outcome]).sort(), [
    [false, 'Completed', 'approved'],
    [true, 'Failed', 'interrupted'],
  ]);
  assert.equal((await json<{ state: string }[]>('wp', 'list', SLUG))[0]!.state, 'DONE');
  assert.equal((await json<{ valid: boolean }>('audit:verify', '--feature-slug', SLUG)).valid, true);
});
