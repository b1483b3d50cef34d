/**
 * @module signInDirectoryContract
 * The contract every `SignInDirectory` adapter must pass; the memory, file
 * and PostgreSQL directories run this same suite (exported from
 * `@switchyard/credentials/contract`).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { INTERRUPTED_ERROR, type SignInDirectory, type SignInRecordWrite } from './signInDirectory.js';

/** A directory under test. */
export interface SignInDirectorySubject {
  directory: SignInDirectory;
  close?: () => Promise<void>;
}

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

/** A pending sign-in of `nodeId`, shown until ten minutes past its code's expiry. */
export function sampleSignInRecord(nodeId: string, overrides: Partial<SignInRecordWrite> = {}): SignInRecordWrite {
  return {
    id: randomBytes(16).toString('base64url'),
    flow: 'acme',
    state: 'pending',
    prompt: {
      user_code: 'WDJB-MJHT',
      verification_uri: 'https://auth.example/device',
      verification_uri_complete: null,
      expires_at: iso(15 * 60_000),
      interval_ms: 5000,
    },
    started_at: iso(0),
    finished_at: null,
    credential_id: null,
    error: null,
    node_id: nodeId,
    forget_at: iso(25 * 60_000),
    ...overrides,
  };
}

/** Node ids of one test's own: a shared database keeps the rows of the tests before it. */
const nodeIds = () => {
  const suffix = randomBytes(4).toString('hex');
  return [`node-a-${suffix}`, `node-b-${suffix}`] as const;
};

async function eventually(what: string, condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Runs the contract against fresh subjects from `makeSubject`.
 *
 * @example
 * ```ts
 * runSignInDirectoryContract('MemorySignInDirectory', async () => ({ directory: new MemorySignInDirectory() }));
 * ```
 */
export function runSignInDirectoryContract(name: string, makeSubject: () => Promise<SignInDirectorySubject>): void {
  const withSubject = (fn: (directory: SignInDirectory) => Promise<void>) => async () => {
    const subject = await makeSubject();
    try {
      await fn(subject.directory);
    } finally {
      await subject.directory.close();
      await subject.close?.();
    }
  };

  describe(`SignInDirectory contract: ${name}`, () => {
    test(
      'put then get answers the record, without a cancel request, until its forget_at',
      withSubject(async (directory) => {
        const [nodeA] = nodeIds();
        const record = sampleSignInRecord(nodeA);
        await directory.put(record);
        assert.deepEqual(await directory.get(record.id, T0), { ...record, cancel_requested: false });
        assert.equal(await directory.get(record.id, Date.parse(record.forget_at)), undefined, 'forgotten at forget_at');
        assert.equal(await directory.get('no-such-id', T0), undefined);
        const finished = {
          ...record,
          state: 'succeeded' as const,
          finished_at: iso(1000),
          credential_id: 'acme-1',
          forget_at: iso(601_000),
        };
        await directory.put(finished);
        assert.deepEqual(await directory.get(record.id, T0), { ...finished, cancel_requested: false }, 'a put replaces the record');
      }),
    );

    test(
      'requestCancel flags a pending sign-in and notifies; a finished one is answered as it is; a later put keeps the flag',
      withSubject(async (directory) => {
        const [nodeA] = nodeIds();
        const heard: string[] = [];
        const stop = directory.onCancelRequest((id) => heard.push(id));
        const finished = sampleSignInRecord(nodeA, {
          state: 'failed',
          finished_at: iso(1000),
          error: { code: 'access_denied', message: 'denied' },
        });
        const pending = sampleSignInRecord(nodeA);
        await directory.put(finished);
        await directory.put(pending);

        assert.deepEqual(await directory.requestCancel(finished.id, T0), { ...finished, cancel_requested: false });
        assert.equal(await directory.requestCancel('no-such-id', T0), undefined);
        assert.deepEqual(await directory.requestCancel(pending.id, T0), { ...pending, cancel_requested: true });
        await eventually('the cancel notification', () => heard.includes(pending.id));
        // Notifications arrive in order: had the finished one or the unknown one been announced, it would be here first.
        assert.deepEqual(heard, [pending.id]);

        const cancelled = { ...pending, state: 'cancelled' as const, finished_at: iso(2000) };
        await directory.put(cancelled);
        assert.equal((await directory.get(pending.id, T0))?.cancel_requested, true, "the owner's write keeps the request");
        assert.equal((await directory.get(pending.id, T0))?.state, 'cancelled');

        stop();
        const other = sampleSignInRecord(nodeA);
        await directory.put(other);
        await directory.requestCancel(other.id, T0);
        assert.equal((await directory.get(other.id, T0))?.cancel_requested, true);
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.deepEqual(heard, [pending.id], 'no call after unsubscribing');
      }),
    );

    test(
      "interrupt ends the node's pending sign-ins as failed (interrupted), and no one else's",
      withSubject(async (directory) => {
        const [nodeA, nodeB] = nodeIds();
        const mine = sampleSignInRecord(nodeA);
        const mineDone = sampleSignInRecord(nodeA, { state: 'succeeded', finished_at: iso(1000), credential_id: 'acme-1' });
        const theirs = sampleSignInRecord(nodeB);
        for (const record of [mine, mineDone, theirs]) await directory.put(record);

        assert.equal(await directory.interrupt(nodeA, iso(5000), iso(605_000)), 1);
        assert.deepEqual(await directory.get(mine.id, T0), {
          ...mine,
          state: 'failed',
          finished_at: iso(5000),
          forget_at: iso(605_000),
          error: { ...INTERRUPTED_ERROR },
          cancel_requested: false,
        });
        assert.deepEqual(await directory.get(mineDone.id, T0), { ...mineDone, cancel_requested: false });
        assert.equal((await directory.get(theirs.id, T0))?.state, 'pending');
        assert.equal(await directory.interrupt(nodeA, iso(6000), iso(606_000)), 0, 'nothing left pending');
      }),
    );

    test(
      'prune removes the records whose forget_at has come',
      withSubject(async (directory) => {
        const [nodeA] = nodeIds();
        const early = sampleSignInRecord(nodeA, { forget_at: iso(1000) });
        const late = sampleSignInRecord(nodeA, { forget_at: iso(9000) });
        await directory.put(early);
        await directory.put(late);
        await directory.prune(T0 + 1000);
        // Read as of T0, when both would still be shown: only a removed record is missing.
        assert.equal(await directory.get(early.id, T0), undefined);
        assert.equal((await directory.get(late.id, T0))?.id, late.id);
      }),
    );
  });
}
