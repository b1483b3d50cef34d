import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FakeScheduler, type Scheduler, systemScheduler } from '@switchyard/runtime';
import { eventually } from '@switchyard/test-support';
import { ACCESS_TOKEN, controlledFlow, DEVICE_CODE } from '../../test/controlledFlow.js';
import { runSignInDirectoryContract } from '../contract.js';
import { CredentialManager } from '../manager/credentialManager.js';
import { MemoryCredentialStore } from '../store/memoryCredentialStore.js';
import { MemoryQuotaStore } from '../store/quotaStore.js';
import type { AuthFlow } from './authFlow.js';
import { createHttpClient } from './http.js';
import { MemorySignInDirectory, type SignInDirectory } from './signInDirectory.js';
import { SignInSessions } from './signInSessions.js';

runSignInDirectoryContract('MemorySignInDirectory', async () => ({ directory: new MemorySignInDirectory() }));

async function node(nodeId: string, directory: SignInDirectory, flow: AuthFlow) {
  const manager = new CredentialManager({
    store: new MemoryCredentialStore(),
    quotaStore: new MemoryQuotaStore(),
    flows: [flow],
    refresh: { enabled: false },
    signInDirectory: directory,
    nodeId,
  });
  await manager.start();
  return manager;
}

/** Managers `node-a` (whose flow's runs the test drives) and `node-b` on one directory. */
async function twoNodes() {
  const directory = new MemorySignInDirectory();
  const { flow, runs } = controlledFlow();
  const a = await node('node-a', directory, flow);
  const b = await node('node-b', directory, controlledFlow().flow);
  return { directory, runs, a, b };
}

/** What a bare `SignInSessions` needs, on `scheduler`, for sign-ins that never succeed. */
function sessionOptions(flow: AuthFlow, scheduler: Scheduler) {
  return {
    scheduler,
    flow: (name: string) => (name === flow.name ? flow : undefined),
    context: (signal: AbortSignal) => ({ http: createHttpClient(), scheduler, signal }),
    save: async () => assert.fail('nothing signs in here'),
  };
}

/** Bare `SignInSessions` of `node-a` and `node-b` on one memory directory and one fake clock. */
function sessionsOnAFakeClock() {
  const clock = new FakeScheduler(Date.parse('2026-03-01T12:00:00.000Z'));
  const options = { ...sessionOptions(controlledFlow().flow, clock), directory: new MemorySignInDirectory() };
  return { clock, a: new SignInSessions({ ...options, nodeId: 'node-a' }), b: new SignInSessions({ ...options, nodeId: 'node-b' }) };
}

describe('sign-ins across nodes sharing a directory', () => {
  // The system scheduler's timers are unref'ed; in a server its socket keeps the process up while a cancel waits.
  let keepAlive: NodeJS.Timeout;
  before(() => {
    keepAlive = setInterval(() => undefined, 1000);
  });
  after(() => clearInterval(keepAlive));

  test('another node answers pending, then succeeded with the credential id; no secret reaches the directory', async () => {
    const { directory, runs, a, b } = await twoNodes();
    try {
      const session = await a.signIns.start('acme');
      assert.throws(() => b.signIns.get(session.id), { code: 'invalid_argument' }, 'b does not run it');
      const seen = await b.signIns.status(session.id);
      assert.deepEqual(seen, a.signIns.get(session.id));
      assert.equal(seen.state, 'pending');

      runs[0]!.approve();
      const record = await a.signIns.wait(session.id);
      await eventually('b to see the success', async () => (await b.signIns.status(session.id)).state === 'succeeded');
      assert.equal((await b.signIns.status(session.id)).credential_id, record.id);
      const stored = JSON.stringify(await directory.get(session.id, Date.now()));
      for (const secret of [DEVICE_CODE, ACCESS_TOKEN, 'refresh-never-shared']) assert.ok(!stored.includes(secret), secret);
      assert.match(stored, /"node_id":"node-a"/);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test("a cancel on another node aborts the owner's flow, and both answer cancelled", async () => {
    const { runs, a, b } = await twoNodes();
    try {
      const session = await a.signIns.start('acme');
      const answer = await b.signIns.cancelAnywhere(session.id);
      assert.equal(runs[0]!.signal.aborted, true, "a's flow was aborted");
      assert.equal(answer.state, 'cancelled');
      assert.equal(a.signIns.get(session.id).state, 'cancelled');
      assert.equal((await b.signIns.status(session.id)).state, 'cancelled');
      // A finished sign-in is left as it ended.
      assert.equal((await b.signIns.cancelAnywhere(session.id)).state, 'cancelled');
      await assert.rejects(b.signIns.cancelAnywhere('no-such-session'), { code: 'invalid_argument' });
      await assert.rejects(b.signIns.status('no-such-session'), { code: 'invalid_argument' });
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('a node that restarts marks the sign-ins it left pending as interrupted; a stopping node does the same', async () => {
    const directory = new MemorySignInDirectory();
    // A crash: the directory still says pending, and no process polls for it.
    const crashed = await node('node-a', directory, controlledFlow().flow);
    const lost = await crashed.signIns.start('acme');
    const other = await node('node-b', directory, controlledFlow().flow);
    const theirs = await other.signIns.start('acme');

    const restarted = await node('node-a', directory, controlledFlow().flow);
    try {
      const answer = await other.signIns.status(lost.id);
      assert.equal(answer.state, 'failed');
      assert.equal(answer.error?.code, 'interrupted');
      assert.notEqual(answer.finished_at, null);
      assert.equal((await restarted.signIns.status(theirs.id)).state, 'pending', "another node's sign-in is left alone");

      // A graceful stop: node-b's pending sign-in ends failed (interrupted) rather than looking cancelled by someone.
      await other.close();
      const stopped = await restarted.signIns.status(theirs.id);
      assert.deepEqual([stopped.state, stopped.error?.code], ['failed', 'interrupted']);
    } finally {
      await crashed.close();
      await restarted.close();
    }
  });

  test('the owner notices a cancel request whose notification was lost on its next check', async () => {
    const shared = new MemorySignInDirectory();
    // What node-a sees: the same records, but no notifications.
    const deaf: SignInDirectory = Object.assign(Object.create(shared) as SignInDirectory, { onCancelRequest: () => () => undefined });
    const { flow, runs } = controlledFlow();
    const options = sessionOptions(flow, systemScheduler);
    const a = new SignInSessions({ ...options, directory: deaf, nodeId: 'node-a', cancelCheckIntervalMs: 20 });
    const b = new SignInSessions({ ...options, directory: shared, nodeId: 'node-b', remoteCancelWaitMs: 2_000 });
    try {
      const session = await a.start('acme');
      const answer = await b.cancelAnywhere(session.id);
      assert.equal(answer.state, 'cancelled', 'b waited for the owner to end it');
      assert.equal(runs[0]!.signal.aborted, true);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('a sign-in the directory cannot record is refused, and its flow stopped', async () => {
    const broken = new MemorySignInDirectory();
    broken.put = async () => {
      throw new Error('database unreachable');
    };
    const { flow } = controlledFlow();
    let signal: AbortSignal | undefined;
    const sessions = new SignInSessions({
      scheduler: systemScheduler,
      flow: () => flow,
      context: (s) => {
        signal = s;
        return { http: createHttpClient(), scheduler: systemScheduler, signal: s };
      },
      save: async () => assert.fail('nothing signs in here'),
      directory: broken,
    });
    await assert.rejects(sessions.start('acme'), { code: 'store_failed' });
    assert.equal(signal?.aborted, true);
    assert.deepEqual(sessions.list(), []);
    await sessions.close();
  });

  test('a sign-in whose record is written while the sessions close is stopped and refused', async () => {
    const directory = new MemorySignInDirectory();
    let release!: () => void;
    const written = new Promise<void>((resolve) => (release = resolve));
    const put = directory.put.bind(directory);
    directory.put = async (record) => {
      await written;
      return put(record);
    };
    const { flow, runs } = controlledFlow();
    let signal: AbortSignal | undefined;
    const sessions = new SignInSessions({
      ...sessionOptions(flow, systemScheduler),
      context: (s) => {
        signal = s;
        return { http: createHttpClient(), scheduler: systemScheduler, signal: s };
      },
      directory,
    });
    const starting = sessions.start('acme');
    await eventually('the start record to be on its way', () => signal !== undefined);
    await sessions.close();
    release();
    await assert.rejects(starting, { code: 'closed' });
    assert.equal(signal?.aborted, true);
    assert.equal(runs.length, 0, 'the flow never started polling');
  });

  test('finished sign-ins leave the directory after the retention time', async () => {
    const { clock, a, b } = sessionsOnAFakeClock();
    try {
      const session = await a.start('acme');
      a.cancel(session.id);
      await eventually('the end to be recorded', async () => (await b.status(session.id)).state === 'cancelled');
      clock.set(clock.now() + 10 * 60_000 - 1);
      assert.equal((await b.status(session.id)).state, 'cancelled', 'still shown just before ten minutes');
      clock.set(clock.now() + 1);
      await assert.rejects(b.status(session.id), { code: 'invalid_argument' });
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('a sign-in whose node is gone reads as expired once its device code has expired', async () => {
    const { clock, a, b } = sessionsOnAFakeClock();
    try {
      // node-a starts a sign-in and then never answers again (its process is gone, its row stays pending).
      const session = await a.start('acme');
      clock.set(Date.parse(session.prompt.expires_at) - 1);
      assert.equal((await b.status(session.id)).state, 'pending');
      clock.set(Date.parse(session.prompt.expires_at));
      const late = await b.status(session.id);
      assert.equal(late.state, 'failed');
      assert.equal(late.error?.code, 'expired_token');
      assert.equal(late.finished_at, session.prompt.expires_at);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
