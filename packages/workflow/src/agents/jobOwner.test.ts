import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, test } from 'node:test';
import { tempRepo } from '../../test/gitFixture.js';
import { workflowWithLoginPackage } from '../../test/helpers.js';
import { GitRepository } from '../git/gitRepository.js';
import type { Workflow } from '../workflow.js';
import { MockAgentAdapter } from './agentAdapter.js';
import { AgentDispatcher } from './agentDispatcher.js';
import { type JobOwner, processJobOwner } from './jobOwner.js';
import { HeuristicReviewer } from './reviewers.js';

let repo: Awaited<ReturnType<typeof tempRepo>>;
let workflow: Workflow;
beforeEach(async () => {
  repo = await tempRepo();
  workflow = await workflowWithLoginPackage();
});
afterEach(() => repo.cleanup());

test('processJobOwner: this process is alive, a finished one and an earlier one with our pid are not, another host is unknown', () => {
  const owner = processJobOwner('box', process.pid, 1_000);
  assert.equal(owner.id, `box:${process.pid}:1000`);
  assert.equal(owner.isAlive(owner.id), true);
  assert.equal(owner.isAlive(`box:${process.pid}:999`), false, 'same pid, other start: a restarted process');
  const gone = spawnSync(process.execPath, ['-e', '0']).pid;
  assert.equal(owner.isAlive(`box:${gone}:5`), false);
  assert.equal(owner.isAlive(`elsewhere:${process.pid}:1000`), undefined);
  assert.equal(owner.isAlive('not an owner'), undefined);
});

test('recoverInterrupted fails the jobs of a stopped process and leaves those a live process runs', async () => {
  const alive = new Set(['implement-process']);
  const owner = (id: string): JobOwner => ({ id, isAlive: (other) => other === id || alive.has(other) });
  let release: (() => void) | undefined;
  const hanging = new MockAgentAdapter(
    () =>
      new Promise((resolve) => {
        release = () => resolve({ exit_code: 0 });
      }),
  );
  const deps = { workflow, git: new GitRepository(repo.root), reviewer: new HeuristicReviewer(), adapters: [hanging] };
  // `yard implement` runs a job; `yard serve` starts next to it and recovers what it thinks was interrupted.
  const implement = new AgentDispatcher({ ...deps, owner: owner('implement-process') });
  const serve = new AgentDispatcher({ ...deps, owner: owner('serve-process') });
  const job = await implement.dispatch('001-login', 1);
  while (release === undefined) await new Promise((r) => setImmediate(r));
  assert.deepEqual(await serve.recoverInterrupted(), []);
  assert.equal((await serve.get(job.id)).state, 'Running');

  // An owner-less job (recorded before owners were) and the job of a process that died are recovered.
  const { owner: _owner, ...ownerless } = job;
  await workflow.store.transact((tx) => tx.insertJob({ ...ownerless, id: '00000000-0000-4000-8000-000000000001' }));
  alive.delete('implement-process');
  const recovered = await serve.recoverInterrupted();
  assert.deepEqual(recovered.map((j) => [j.id, j.state, j.outcome]).sort(), [
    ['00000000-0000-4000-8000-000000000001', 'Failed', 'interrupted'],
    [job.id, 'Failed', 'interrupted'],
  ]);
  const cancelling = implement.cancel(job.id);
  release!();
  await cancelling;
});
