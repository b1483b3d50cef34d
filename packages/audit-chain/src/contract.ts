/**
 * @module @switchyard/audit-chain/contract
 * The contract every `AuditStore` adapter must pass. Adapters in other
 * packages (the workflow's SQLite and PostgreSQL stores) run this same
 * suite, so "a store" means one thing everywhere.
 *
 * @example
 * ```ts
 * import { runAuditStoreContract } from '@switchyard/audit-chain/contract';
 * runAuditStoreContract('my store', async () => ({ store: await MyStore.open() }));
 * ```
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AuditChainError, AuditLog, type AuditStore, sealEntry } from './index.js';

/** A store under test, with optional hooks for durability checks and cleanup. */
export interface ContractSubject {
  store: AuditStore;
  /** Opens the same underlying storage again (a restart); omit for volatile stores. */
  reopen?: () => Promise<AuditStore>;
  /** Releases resources. */
  close?: () => Promise<void>;
}

const ORIGIN = 'contract:test/log';

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** Registers the `AuditStore` contract tests for one adapter. */
export function runAuditStoreContract(name: string, makeSubject: () => Promise<ContractSubject>): void {
  describe(`AuditStore contract: ${name}`, () => {
    const withSubject = (fn: (subject: ContractSubject) => Promise<void>) => async () => {
      const subject = await makeSubject();
      try {
        await fn(subject);
      } finally {
        await subject.close?.();
      }
    };

    test(
      'an empty store has an empty head and no entries',
      withSubject(async ({ store }) => {
        assert.deepEqual(await store.head(), { size: 0, hash: null });
        assert.deepEqual(await collect(store.read()), []);
      }),
    );

    test(
      'appended entries come back in order, with a head that follows them',
      withSubject(async ({ store }) => {
        const log = new AuditLog(store, { origin: ORIGIN });
        const written = [];
        for (let i = 0; i < 25; i++) written.push(await log.append({ actor: 'alice', step: i }));
        assert.deepEqual(
          written.map((e) => e.id),
          Array.from({ length: 25 }, (_, i) => i + 1),
        );
        assert.deepEqual(await store.head(), { size: 25, hash: written[24]!.hash });
        assert.deepEqual(await collect(store.read()), written);
        assert.deepEqual(
          (await collect(store.read({ fromId: 10, toId: 12 }))).map((e) => e.id),
          [10, 11, 12],
        );
        assert.deepEqual(await collect(store.read({ fromId: 26 })), []);
        const result = await log.verify();
        assert.equal(result.valid, true, result.error_message ?? '');
      }),
    );

    test(
      'concurrent appends never fork the chain',
      withSubject(async ({ store }) => {
        const log = new AuditLog(store, { origin: ORIGIN });
        const entries = await Promise.all(Array.from({ length: 100 }, (_, i) => log.append({ actor: `writer-${i % 7}`, step: i })));
        assert.deepEqual(
          entries.map((e) => e.id).sort((a, b) => a - b),
          Array.from({ length: 100 }, (_, i) => i + 1),
        );
        const result = await log.verify();
        assert.equal(result.valid, true, result.error_message ?? '');
        assert.equal(result.entries_verified, 100);
      }),
    );

    test(
      'appendMany is all or nothing',
      withSubject(async ({ store }) => {
        const log = new AuditLog(store, { origin: ORIGIN });
        await log.append({ step: 0 });
        await assert.rejects(log.appendMany([{ step: 1 }, { step: 2, id: 99 }]), (error: unknown) => error instanceof AuditChainError);
        assert.equal((await store.head()).size, 1);
        const added = await log.appendMany([{ step: 1 }, { step: 2 }]);
        assert.deepEqual(
          added.map((e) => e.id),
          [2, 3],
        );
      }),
    );

    test(
      'a builder that does not continue the head is refused and changes nothing',
      withSubject(async ({ store }) => {
        const log = new AuditLog(store, { origin: ORIGIN });
        await log.append({ step: 0 });
        const stray = sealEntry({ id: 5, prevHash: '0'.repeat(64), timestamp: '2026-01-01T00:00:00Z', fields: {} });
        await assert.rejects(store.append(() => [stray]));
        const failing = () => {
          throw new Error('builder failed');
        };
        await assert.rejects(store.append(failing), /builder failed/);
        assert.equal((await store.head()).size, 1);
        await log.append({ step: 1 });
        assert.equal((await log.verify()).valid, true);
      }),
    );

    test(
      'proofs and checkpoints agree with what the store holds',
      withSubject(async ({ store }) => {
        const log = new AuditLog(store, { origin: ORIGIN });
        for (let i = 0; i < 13; i++) await log.append({ step: i });
        const head = await log.head();
        const result = await log.verify();
        assert.equal(head.root, result.root);
        const proof = await log.proveInclusion(6);
        assert.equal(proof.root, head.root);
      }),
    );

    test(
      'entries survive reopening',
      withSubject(async (subject) => {
        if (!subject.reopen) return;
        const log = new AuditLog(subject.store, { origin: ORIGIN });
        for (let i = 0; i < 5; i++) await log.append({ step: i });
        const before = await collect(subject.store.read());
        const headBefore = await subject.store.head();
        const reopened = await subject.reopen();
        assert.deepEqual(await collect(reopened.read()), before);
        assert.deepEqual(await reopened.head(), headBefore);
        const again = new AuditLog(reopened, { origin: ORIGIN });
        await again.append({ step: 5 });
        assert.equal((await again.verify()).entries_verified, 6);
      }),
    );
  });
}
