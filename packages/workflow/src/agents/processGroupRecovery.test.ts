/**
 * An agent's process group outlives a `yard` killed outright: the job records the group, and the process that
 * recovers the interrupted job stops what is left of that very group.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import { tempRepo } from '../../test/gitFixture.js';
import { workflowWithLoginPackage } from '../../test/helpers.js';
import { GitRepository } from '../git/gitRepository.js';
import type { Workflow } from '../workflow.js';
import { AgentDispatcher } from './agentDispatcher.js';
import type { JobOwner } from './jobOwner.js';
import { ProcessAgentAdapter } from './processAgentAdapter.js';
import { describeProcessGroup, isRecordedGroupRunning, processGroupAlive, stopRecordedProcessGroup } from './processGroup.js';
import { HeuristicReviewer } from './reviewers.js';

const linux = process.platform === 'linux';
/** A leader that started a member and waits: a wrapper script and the agent it runs. */
const WRAPPER = 'sleep 300 & wait';

const started: number[] = [];
function startGroup(): ChildProcess {
  const child = spawn('sh', ['-c', WRAPPER], { detached: true, stdio: 'ignore' });
  started.push(child.pid!);
  return child;
}
afterEach(() => {
  for (const pgid of started.splice(0)) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

describe('a recorded process group', { skip: !linux && 'needs /proc' }, () => {
  test('is found running while its leader or any member runs, and is stopped whole', async () => {
    const leader = startGroup();
    const recorded = await describeProcessGroup(leader.pid!);
    assert.ok(recorded?.start_ticks !== undefined && recorded.boot_id !== undefined, 'the leader is recorded with its start time and boot');
    assert.equal(await isRecordedGroupRunning(recorded), true);
    // A later process given the same number is not the recorded one.
    assert.equal(await isRecordedGroupRunning({ ...recorded, start_ticks: recorded.start_ticks + 1 }), false);
    assert.equal(await isRecordedGroupRunning({ ...recorded, boot_id: 'an-earlier-boot' }), false);
    assert.equal(await isRecordedGroupRunning({ ...recorded, host: 'another-host' }), false);

    // The leader dies (a wrapper killed); the agent it ran is still in the group.
    const exited = new Promise((resolve) => leader.once('exit', resolve));
    process.kill(leader.pid!, 'SIGKILL');
    await exited;
    assert.equal(processGroupAlive(leader.pid!), true, 'the member runs on');
    assert.equal(await isRecordedGroupRunning(recorded), true, 'a group keeps its id while members run');

    assert.equal(await stopRecordedProcessGroup(recorded, 2000), true);
    assert.equal(processGroupAlive(leader.pid!), false);
    assert.equal(await stopRecordedProcessGroup(recorded, 2000), false, 'nothing left to stop');
  });
});

describe('recovering the job of a crashed process', { skip: !linux && 'needs /proc' }, () => {
  let repo: Awaited<ReturnType<typeof tempRepo>>;
  let workflow: Workflow;
  beforeEach(async () => {
    repo = await tempRepo();
    workflow = await workflowWithLoginPackage();
  });
  afterEach(() => repo.cleanup());

  /**
   * `yard implement` and `yard serve` on one store, each with a dispatcher running a process agent; `alive`
   * holds the owners still running (delete `implement-process` to have it killed outright).
   */
  function twoProcesses() {
    const alive = new Set(['implement-process']);
    const owner = (id: string): JobOwner => ({ id, isAlive: (other) => other === id || alive.has(other) });
    const agent = new ProcessAgentAdapter({ command: 'sh', args: ['-c', WRAPPER], killGraceMs: 200 });
    const deps = { workflow, git: new GitRepository(repo.root), reviewer: new HeuristicReviewer(), adapters: [agent] };
    return {
      alive,
      implement: new AgentDispatcher({ ...deps, owner: owner('implement-process') }),
      serve: new AgentDispatcher({ ...deps, owner: owner('serve-process') }),
    };
  }

  test("stops the agent the crashed process left running, and says so in the job's error", async () => {
    const { alive, implement, serve } = twoProcesses();

    const job = await implement.dispatch('001-login', 1);
    let pgid = 0;
    await eventually('the job to record its agent', async () => {
      pgid = (await serve.get(job.id)).agent_process?.pid ?? 0;
      return pgid > 0;
    });
    started.push(pgid);
    const recorded = (await serve.get(job.id)).agent_process!;
    assert.equal(recorded.host, (await describeProcessGroup(pgid))?.host);

    // `yard implement` is killed outright: nothing of it stops the agent, and its job stays Running.
    alive.delete('implement-process');
    const [recovered] = await serve.recoverInterrupted();
    assert.equal(recovered?.id, job.id);
    assert.equal(recovered?.state, 'Failed');
    assert.equal(recovered?.outcome, 'interrupted');
    assert.match(recovered?.error ?? '', /its agent was still running and has been stopped/);
    assert.equal(processGroupAlive(pgid), false, 'nothing of the agent runs any more');
    // The dispatcher of the "crashed" process sees its agent end; the job keeps the recovery's verdict.
    assert.equal((await implement.wait(job.id)).outcome, 'interrupted');
  });

  test("a cancel through another process's dispatcher (a server's API) cancels the job in the store; the owner gone, it stops the agent", async () => {
    const { alive, implement, serve } = twoProcesses();

    // The owner lives: the server marks the job Cancelled, where the owner looks, and leaves its agent to it.
    const first = await implement.dispatch('001-login', 1);
    await eventually('the job to record its agent', async () => (await serve.get(first.id)).agent_process !== undefined);
    const livePgid = (await serve.get(first.id)).agent_process!.pid;
    started.push(livePgid);
    const cancelledElsewhere = await serve.cancel(first.id, 'bob');
    assert.equal(cancelledElsewhere.state, 'Cancelled');
    assert.equal(cancelledElsewhere.error, 'cancelled by bob');
    assert.equal(processGroupAlive(livePgid), true, "the server leaves a live owner's agent to that owner");
    await implement.cancel(first.id);
    assert.equal((await implement.wait(first.id)).state, 'Cancelled');

    // The owner is gone: nothing would stop its agent but the cancel.
    const second = await implement.dispatch('001-login', 1);
    await eventually('the job to record its agent', async () => (await serve.get(second.id)).agent_process !== undefined);
    const orphanPgid = (await serve.get(second.id)).agent_process!.pid;
    started.push(orphanPgid);
    alive.delete('implement-process');
    assert.equal((await serve.cancel(second.id)).state, 'Cancelled');
    assert.equal(processGroupAlive(orphanPgid), false, 'the agent of a process that is gone was stopped');
    await implement.wait(second.id);
  });
});
