/**
 * @module @switchyard/credentials/contract
 * The contract every `CredentialStore` and `QuotaStore` adapter must pass.
 * The memory and file stores run it here; the PostgreSQL stores run the
 * very same suites, so "a store" means one thing everywhere.
 *
 * @example
 * ```ts
 * import { runCredentialStoreContract } from '@switchyard/credentials/contract';
 * runCredentialStoreContract('my store', async () => ({ store: await MyStore.open(), close: () => cleanup() }));
 * ```
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { z } from 'zod';
import { type Credential, type CredentialSchema, parseCredential, RevisionConflict } from './index.js';
import type { CredentialStore, StoreChange } from './store/credentialStore.js';
import type { QuotaStore } from './store/quotaStore.js';

/** A credential store under test. */
export interface CredentialStoreSubject {
  store: CredentialStore;
  /** Opens the same storage again (a restart); omit for volatile stores. */
  reopen?: () => Promise<CredentialStore>;
  close?: () => Promise<void>;
}

/** A credential for contract tests; `overrides` replace fields. */
export function sampleCredential(id: string, overrides: Partial<z.input<typeof CredentialSchema>> = {}): Credential {
  return parseCredential({
    id,
    provider: 'openai',
    type: 'api_key',
    token: `sk-contract-${id}-secret`,
    priority: 1,
    label: `label of ${id}`,
    quota: { limit: 1000, used: 10 },
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...overrides,
  });
}

function oauthSample(id: string): Credential {
  return sampleCredential(id, {
    provider: 'code-assistant',
    type: 'oauth',
    token: 'short-lived-api-token',
    refresh_token: 'account-token',
    expires_at: '2026-01-01T01:00:00.000Z',
    oauth: { flow: 'code-assistant', params: { api_base_url: 'https://api.example' }, secrets: { client_secret: 'cs' } },
  });
}

/** Wraps a test body: a fresh subject for each test, closed afterwards whatever happens. */
function subjectRunner<S extends { store: { close(): Promise<void> }; close?: () => Promise<void> }>(makeSubject: () => Promise<S>) {
  return (fn: (subject: S) => Promise<void>) => async () => {
    const subject = await makeSubject();
    try {
      await fn(subject);
    } finally {
      await subject.store.close();
      await subject.close?.();
    }
  };
}

const withoutRevision = ({ revision: _revision, ...rest }: Credential) => rest;

/** What an adapter claims, so the suite registers the tests that apply. */
export interface ContractOptions {
  /** The store keeps data across `reopen` (requires the subject's `reopen`). */
  durable?: boolean;
}

/** Registers the `CredentialStore` contract tests for one adapter. */
export function runCredentialStoreContract(
  name: string,
  makeSubject: () => Promise<CredentialStoreSubject>,
  options: ContractOptions = {},
): void {
  describe(`CredentialStore contract: ${name}`, () => {
    const withSubject = subjectRunner(makeSubject);

    test(
      'an empty store lists nothing and gets nothing',
      withSubject(async ({ store }) => {
        assert.deepEqual(await store.list(), []);
        assert.equal(await store.get('nobody'), undefined);
        assert.equal(await store.delete('nobody'), false);
      }),
    );

    test(
      'put stores the whole record, secrets included, with revision 1, and list orders by id',
      withSubject(async ({ store }) => {
        const b = await store.put(sampleCredential('b-key', { revision: 99 }));
        const a = await store.put(oauthSample('a-oauth'));
        assert.equal(b.revision, 1, 'the caller’s revision is ignored');
        assert.equal(a.revision, 1);
        assert.deepEqual(withoutRevision((await store.get('a-oauth'))!), withoutRevision(oauthSample('a-oauth')));
        assert.deepEqual(
          (await store.list()).map((c) => [c.id, c.revision, c.token]),
          [
            ['a-oauth', 1, 'short-lived-api-token'],
            ['b-key', 1, 'sk-contract-b-key-secret'],
          ],
        );
      }),
    );

    test(
      'every put raises the revision by one, and deletes continue the count',
      withSubject(async ({ store }) => {
        let stored = await store.put(sampleCredential('k'));
        for (let i = 2; i <= 5; i++) {
          stored = await store.put({ ...stored, priority: i });
          assert.equal(stored.revision, i);
        }
        assert.equal((await store.get('k'))!.priority, 5);
        assert.equal(await store.delete('k'), true);
        assert.equal(await store.get('k'), undefined);
        const recreated = await store.put(sampleCredential('k'));
        assert.ok(recreated.revision > 6, `a re-created credential continues above its tombstone (got ${recreated.revision})`);
      }),
    );

    test(
      'conditional writes: expectedRevision must match, null means create only',
      withSubject(async ({ store }) => {
        const first = await store.put(sampleCredential('c'), { expectedRevision: null });
        await assert.rejects(store.put(sampleCredential('c'), { expectedRevision: null }), RevisionConflict);
        await assert.rejects(store.put(sampleCredential('c'), { expectedRevision: 7 }), (error: RevisionConflict) => {
          assert.equal(error.code, 'revision_conflict');
          assert.equal(error.actual, 1);
          return true;
        });
        const second = await store.put({ ...first, priority: 9 }, { expectedRevision: 1 });
        assert.equal(second.revision, 2);
        await assert.rejects(store.delete('c', { expectedRevision: 1 }), RevisionConflict);
        assert.equal(await store.delete('c', { expectedRevision: 2 }), true);
      }),
    );

    test(
      'of concurrent writers expecting the same revision, exactly one wins',
      withSubject(async ({ store }) => {
        const base = await store.put(sampleCredential('race'));
        const results = await Promise.allSettled(
          Array.from({ length: 12 }, (_, i) => store.put({ ...base, priority: 100 + i }, { expectedRevision: base.revision })),
        );
        const won = results.filter((r) => r.status === 'fulfilled');
        assert.equal(won.length, 1);
        for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof RevisionConflict);
        const final = (await store.get('race'))!;
        assert.equal(final.revision, 2);
        assert.equal(final.priority, (won[0] as PromiseFulfilledResult<Credential>).value.priority);
      }),
    );

    test(
      'concurrent writes to different credentials all land',
      withSubject(async ({ store }) => {
        await Promise.all(Array.from({ length: 40 }, (_, i) => store.put(sampleCredential(`many-${String(i).padStart(2, '0')}`))));
        const listed = await store.list();
        assert.equal(listed.length, 40);
        assert.ok(listed.every((c) => c.revision === 1));
      }),
    );

    test(
      'watch reports local upserts and deletes with their revisions, until unsubscribed',
      withSubject(async ({ store }) => {
        const seen: StoreChange[] = [];
        const stop = store.watch((change) => {
          if (change.origin === 'local') seen.push(change);
        });
        const stored = await store.put(sampleCredential('w'));
        await store.put({ ...stored, priority: 3 });
        await store.delete('w');
        stop();
        await store.put(sampleCredential('after'));
        assert.deepEqual(
          seen.map((c) => [c.type, c.id, c.revision]),
          [
            ['auth.upsert', 'w', 1],
            ['auth.upsert', 'w', 2],
            ['auth.delete', 'w', 3],
          ],
        );
      }),
    );

    test(
      'records are copies: changing what a caller holds does not change the store',
      withSubject(async ({ store }) => {
        const input = sampleCredential('copy');
        const stored = await store.put(input);
        input.token = 'changed-input';
        stored.token = 'changed-output';
        (await store.get('copy'))!.quota.used = 999;
        const again = (await store.get('copy'))!;
        assert.equal(again.token, 'sk-contract-copy-secret');
        assert.equal(again.quota.used, 10);
      }),
    );

    test(
      'a reopened store holds everything that was written',
      { skip: options.durable ? false : 'volatile store' },
      withSubject(async (subject) => {
        assert.ok(subject.reopen, 'a durable subject must provide reopen()');
        await subject.store.put(oauthSample('durable-oauth'));
        await subject.store.put(sampleCredential('durable-key'));
        await subject.store.delete('durable-key');
        const reopened = await subject.reopen();
        try {
          const listed = await reopened.list();
          assert.deepEqual(
            listed.map((c) => c.id),
            ['durable-oauth'],
          );
          assert.deepEqual(withoutRevision(listed[0]!), withoutRevision(oauthSample('durable-oauth')));
          assert.equal(listed[0]!.revision, 1);
        } finally {
          await reopened.close();
        }
      }),
    );
  });
}

/** A quota store under test. */
export interface QuotaStoreSubject {
  store: QuotaStore;
  reopen?: () => Promise<QuotaStore>;
  close?: () => Promise<void>;
}

/** Registers the `QuotaStore` contract tests for one adapter. */
export function runQuotaStoreContract(name: string, makeSubject: () => Promise<QuotaStoreSubject>, options: ContractOptions = {}): void {
  describe(`QuotaStore contract: ${name}`, () => {
    const withSubject = subjectRunner(makeSubject);
    const DAY1 = '2026-03-01T00:00:00.000Z';
    const DAY2 = '2026-03-02T00:00:00.000Z';

    test(
      'add accumulates within a period and returns the new totals',
      withSubject(async ({ store }) => {
        assert.deepEqual(await store.load(), new Map());
        assert.deepEqual(
          await store.add([{ id: 'a', tokens: 100, period_start: DAY1 }]),
          new Map([['a', { used: 100, period_start: DAY1 }]]),
        );
        const totals = await store.add([
          { id: 'a', tokens: 50, period_start: DAY1 },
          { id: 'b', tokens: 7, period_start: null },
        ]);
        assert.deepEqual(totals.get('a'), { used: 150, period_start: DAY1 });
        assert.deepEqual(totals.get('b'), { used: 7, period_start: null });
        assert.deepEqual((await store.load()).get('a'), { used: 150, period_start: DAY1 });
      }),
    );

    test(
      'usage reported for a newer period starts that period from zero; older periods are ignored',
      withSubject(async ({ store }) => {
        await store.add([{ id: 'a', tokens: 100, period_start: DAY1 }]);
        assert.deepEqual((await store.add([{ id: 'a', tokens: 5, period_start: DAY2 }])).get('a'), { used: 5, period_start: DAY2 });
        // A late flush from the previous period must not count against the new one.
        assert.deepEqual((await store.add([{ id: 'a', tokens: 40, period_start: DAY1 }])).get('a'), { used: 5, period_start: DAY2 });
      }),
    );

    test(
      'set replaces usage (a reset or an operator correction) and remove forgets it',
      withSubject(async ({ store }) => {
        await store.add([{ id: 'a', tokens: 100, period_start: DAY1 }]);
        await store.set('a', { used: 0, period_start: DAY2 });
        assert.deepEqual((await store.load()).get('a'), { used: 0, period_start: DAY2 });
        await store.remove('a');
        assert.equal((await store.load()).has('a'), false);
      }),
    );

    test(
      'concurrent adds are all counted',
      withSubject(async ({ store }) => {
        await Promise.all(Array.from({ length: 50 }, () => store.add([{ id: 'hot', tokens: 3, period_start: DAY1 }])));
        assert.equal((await store.load()).get('hot')!.used, 150);
      }),
    );

    test(
      'a reopened store keeps usage',
      { skip: options.durable ? false : 'volatile store' },
      withSubject(async (subject) => {
        assert.ok(subject.reopen, 'a durable subject must provide reopen()');
        await subject.store.add([{ id: 'kept', tokens: 42, period_start: DAY1 }]);
        const reopened = await subject.reopen();
        try {
          assert.deepEqual((await reopened.load()).get('kept'), { used: 42, period_start: DAY1 });
        } finally {
          await reopened.close();
        }
      }),
    );
  });
}

export { runSignInDirectoryContract, type SignInDirectorySubject, sampleSignInRecord } from './oauth/signInDirectoryContract.js';
