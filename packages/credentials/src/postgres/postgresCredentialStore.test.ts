import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { eventually, postgresForTests, sqlOnce as sql } from '@switchyard/test-support';
import pg from 'pg';
import { runCredentialStoreContract, sampleCredential } from '../contract.js';
import { generateEncryptionKey } from '../encryption.js';
import { CredentialManager } from '../manager/credentialManager.js';
import type { StoreChange } from '../store/credentialStore.js';
import { type AuthChangeEvent, type AuthEvent, AuthEventSchema, newUlid } from './authEvent.js';
import { PostgresCredentialStore, type PostgresCredentialStoreOptions } from './postgresCredentialStore.js';
import { CREDENTIALS_MIGRATIONS } from './schema.js';

const postgres = await postgresForTests(import.meta.url);
// Channels are database-wide: this file's own, so parallel test files never hear each other.
const channel = `auth_test_${randomBytes(6).toString('hex')}`;
const KEY = generateEncryptionKey();

if (!postgres.available) {
  test('PostgresCredentialStore', { skip: postgres.skip }, () => {});
} else {
  const { url } = postgres;
  const open = (options: Partial<PostgresCredentialStoreOptions> = {}) =>
    PostgresCredentialStore.open({
      connection: url,
      max: 3,
      nodeId: 'node-test',
      encryption: { key: KEY },
      ...options,
      events: { channel, backoff: { initialMs: 20, maxMs: 200 }, ...options.events },
    });
  // Creates the tables, so each subject can start from empty ones.
  await (await open()).close();

  runCredentialStoreContract(
    'postgres',
    async () => {
      await sql(url, 'TRUNCATE switchyard_credentials');
      return { store: await open(), reopen: () => open() };
    },
    { durable: true },
  );

  describe('PostgresCredentialStore across handles', () => {
    const opened: PostgresCredentialStore[] = [];
    const track = async (store: Promise<PostgresCredentialStore>) => {
      const s = await store;
      opened.push(s);
      return s;
    };
    after(() => Promise.all(opened.map((s) => s.close())));

    test('secrets are sealed at rest, and a handle with another key reads status error, not garbage', async () => {
      const store = await track(open());
      await store.put(
        sampleCredential('sealed', { type: 'oauth', refresh_token: 'rt-secret', oauth: { flow: 'f', secrets: { cs: 'cs-secret' } } }),
      );
      const { rows } = await sql(url, "SELECT record::text, secrets::text FROM switchyard_credentials WHERE id = 'sealed'");
      const raw = `${rows[0].record}${rows[0].secrets}`;
      for (const secret of ['sk-contract-sealed-secret', 'rt-secret', 'cs-secret']) assert.equal(raw.includes(secret), false, secret);
      assert.match(rows[0].secrets, /aes-256-gcm/);
      const stranger = await track(open({ encryption: { key: generateEncryptionKey() } }));
      const seen = await stranger.get('sealed');
      assert.deepEqual([seen?.status, seen?.token], ['error', '']);
      assert.match(seen!.status_message!, /wrong key/);
      const rekeyed = await track(open({ encryption: { key: generateEncryptionKey(), previousKeys: [KEY] } }));
      assert.equal((await rekeyed.get('sealed'))?.token, 'sk-contract-sealed-secret');
    });

    test('two handles see each other’s changes through the bus, with revisions', async () => {
      const a = await track(open({ nodeId: 'node-a' }));
      const b = await track(open({ nodeId: 'node-b' }));
      const heard: StoreChange[] = [];
      b.watch((change) => heard.push(change));
      // One write at a time: a node that reads the store after several writes reports only the newest state.
      const stored = await a.put(sampleCredential('shared-1'));
      await eventually('the create', () => heard.length === 1);
      await a.put({ ...stored, priority: 7 });
      await eventually('the update', () => heard.length === 2);
      await a.delete('shared-1');
      await eventually('the delete', () => heard.length === 3);
      assert.deepEqual(
        heard.map((c) => [c.type, c.id, c.revision, c.origin]),
        [
          ['auth.upsert', 'shared-1', 1, 'external'],
          ['auth.upsert', 'shared-1', 2, 'external'],
          ['auth.delete', 'shared-1', 3, 'external'],
        ],
      );
      assert.equal((await b.get('shared-1')) === undefined, true);
      await eventually('a to hear its own three events', () => a.bus.stats().own === 3);

      // A burst collapses into the newest state, never into an older one.
      await Promise.all([a.put(sampleCredential('shared-2')), a.put(sampleCredential('shared-3'))]);
      const s2 = (await a.get('shared-2'))!;
      await a.put({ ...s2, priority: 9 });
      await eventually(
        'the burst',
        () => heard.some((c) => c.id === 'shared-2' && c.revision === 2) && heard.some((c) => c.id === 'shared-3'),
      );
      assert.equal(heard.filter((c) => c.id === 'shared-2' && c.revision === 1).length <= 1, true);
    });

    test('the event payload is the documented shape, metadata only, well under 8,000 bytes', async () => {
      const listener = new pg.Client({ connectionString: url });
      await listener.connect();
      const payloads: string[] = [];
      listener.on('notification', (message) => payloads.push(message.payload ?? ''));
      await listener.query(`LISTEN ${listener.escapeIdentifier(channel)}`);
      try {
        const store = await track(open({ nodeId: 'node-shape' }));
        await store.withCorrelation({ request_id: 'req-1', actor: 'admin', reason: 'management api' }, () =>
          store.put(sampleCredential('shape', { provider: 'anthropic' })),
        );
        await store.put(sampleCredential('shape', { provider: 'anthropic' }));
        await store.delete('shape');
        await store.put(sampleCredential('shape', { provider: 'anthropic' }));
        await eventually('four payloads', () => payloads.length >= 4);
        const events = payloads.map((p) => AuthEventSchema.parse(JSON.parse(p)) as AuthChangeEvent);
        for (const [i, payload] of payloads.entries()) {
          assert.ok(Buffer.byteLength(payload) < 8000);
          assert.equal(payload.includes('sk-contract'), false, 'no token in an event');
          assert.match(events[i]!.event_id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
          assert.deepEqual(Object.keys(JSON.parse(payload)).sort(), [
            'correlation',
            'event_id',
            'event_type',
            'mutation',
            'occurred_at',
            'origin',
            'schema_version',
            'subject',
          ]);
        }
        assert.deepEqual(events[0], {
          ...events[0],
          schema_version: 1,
          event_type: 'auth.upsert',
          origin: { node_id: 'node-shape', instance_id: store.bus.origin.instance_id, backend_mode: 'postgres' },
          subject: { auth_id: 'shape', provider: 'anthropic', tenant_id: 'default' },
          mutation: { revision: 1, kind: 'create', reason: 'management api' },
          correlation: { request_id: 'req-1', actor: 'admin' },
        });
        assert.deepEqual(
          events.map((e) => [e.event_type, e.mutation.revision, e.mutation.kind, e.subject.provider]),
          [
            ['auth.upsert', 1, 'create', 'anthropic'],
            ['auth.upsert', 2, 'update', 'anthropic'],
            ['auth.delete', 3, 'delete', 'anthropic'],
            ['auth.upsert', 4, 'create', 'anthropic'],
          ],
        );
        assert.deepEqual(events[1]!.correlation, { request_id: null, actor: null });
      } finally {
        await listener.end();
      }
    });

    test('an invalid payload is counted and discarded, and the listener carries on', async () => {
      const invalid: string[] = [];
      const store = await track(open({ events: { onInvalid: ({ reason }) => invalid.push(reason) } }));
      const writer = await track(open());
      const heard: string[] = [];
      store.watch((change) => heard.push(change.id));
      const valid = JSON.parse((await captureOne(url, () => writer.put(sampleCredential('probe')))) as string) as AuthEvent;
      await sql(url, 'SELECT pg_notify($1, $2)', [channel, 'not json']);
      await sql(url, 'SELECT pg_notify($1, $2)', [channel, JSON.stringify({ ...valid, event_id: newUlid(), schema_version: 2 })]);
      await sql(url, 'SELECT pg_notify($1, $2)', [channel, JSON.stringify({ ...valid, event_id: 'not-an-id' })]);
      await writer.put(sampleCredential('after-junk'));
      await eventually('the change after the junk', () => heard.includes('after-junk'));
      assert.equal(store.bus.stats().invalid, 3);
      assert.deepEqual(invalid, ['not JSON', 'schema_version: Invalid input: expected 1', 'event_id: must be a ULID or a UUID']);
    });

    test('a duplicate event_id is applied once, and a stale revision is ignored', async () => {
      const store = await track(open());
      const writer = await track(open());
      const heard: StoreChange[] = [];
      store.watch((change) => heard.push(change));
      const first = await writer.put(sampleCredential('dup'));
      await eventually('the first change', () => heard.length === 1);
      // Replay the same change: once as-is (a redelivery), once with a new id but the old revision (stale).
      const event = {
        schema_version: 1,
        event_id: '0190b3a4-7c2e-7d1a-9f00-123456789abc',
        event_type: 'auth.upsert',
        occurred_at: new Date().toISOString(),
        origin: { node_id: 'other', instance_id: 'other-1', backend_mode: 'postgres' },
        subject: { auth_id: 'dup', provider: 'openai', tenant_id: 'default' },
        mutation: { revision: 2, kind: 'update', reason: 'test' },
        correlation: { request_id: null, actor: null },
      };
      await writer.put({ ...first, priority: 5 }); // revision 2, heard through the bus
      await eventually('the second change', () => heard.length === 2);
      const before = store.bus.stats();
      await sql(url, 'SELECT pg_notify($1, $2)', [channel, JSON.stringify(event)]);
      await sql(url, 'SELECT pg_notify($1, $2)', [channel, JSON.stringify(event)]);
      await sql(url, 'SELECT pg_notify($1, $2)', [
        channel,
        JSON.stringify({ ...event, event_id: newUlid(), mutation: { ...event.mutation, revision: 1 } }),
      ]);
      await eventually('three more payloads', () => store.bus.stats().received >= before.received + 3);
      const after = store.bus.stats();
      assert.equal(after.duplicates - before.duplicates, 1);
      assert.equal(after.stale - before.stale, 2, 'revision 2 and revision 1 are both already known');
      assert.equal(heard.length, 2);

      // A fresh event for a newer revision is applied once, however often it is delivered.
      await sql(url, "UPDATE switchyard_credentials SET revision = 3 WHERE id = 'dup'");
      const newer = JSON.stringify({ ...event, event_id: newUlid(), mutation: { ...event.mutation, revision: 3 } });
      for (let i = 0; i < 3; i++) await sql(url, 'SELECT pg_notify($1, $2)', [channel, newer]);
      await eventually('the three deliveries', () => store.bus.stats().received >= after.received + 3);
      assert.deepEqual(
        heard.slice(2).map((c) => [c.type, c.revision]),
        [['auth.upsert', 3]],
      );
      assert.equal(store.bus.stats().duplicates - after.duplicates, 2);
    });

    test('an event without mutation.revision is applied (the store says what changed), not discarded', async () => {
      const store = await track(open());
      const writer = await track(open());
      const heard: StoreChange[] = [];
      store.watch((change) => heard.push(change));
      await writer.put(sampleCredential('no-rev'));
      await eventually('the first change', () => heard.length === 1);
      // A change this handle has not heard of, announced by a producer that sends no revision.
      await sql(url, "UPDATE switchyard_credentials SET revision = revision + 1 WHERE id = 'no-rev'");
      const before = store.bus.stats();
      const event = {
        schema_version: 1,
        event_id: newUlid(),
        event_type: 'auth.upsert',
        occurred_at: new Date().toISOString(),
        origin: { node_id: 'other', instance_id: 'other-2', backend_mode: 'postgres' },
        subject: { auth_id: 'no-rev', provider: 'openai', tenant_id: 'default' },
        mutation: { kind: 'update', reason: 'test' },
        correlation: { request_id: null, actor: null },
      };
      await sql(url, 'SELECT pg_notify($1, $2)', [channel, JSON.stringify(event)]);
      await eventually('the change without a revision', () => heard.length === 2);
      assert.deepEqual([heard[1]!.id, heard[1]!.revision], ['no-rev', 2]);
      const after = store.bus.stats();
      assert.equal(after.invalid - before.invalid, 0);
      assert.equal(after.applied - before.applied, 1);
      // Delivered again under a new id, with nothing new in the store: nothing to report.
      await sql(url, 'SELECT pg_notify($1, $2)', [channel, JSON.stringify({ ...event, event_id: newUlid() })]);
      await eventually('the second delivery', () => store.bus.stats().received >= after.received + 1);
      assert.equal(heard.length, 2);
    });

    test('subject.tenant_id is the configured tenant (default `default`)', async () => {
      const tenant = await track(open({ nodeId: 'node-tenant', events: { channel, tenantId: 'acme' } }));
      const payload = JSON.parse((await captureOne(url, () => tenant.put(sampleCredential('tenanted')))) as string) as AuthEvent;
      assert.equal(payload.subject.tenant_id, 'acme');
      const reload = await tenant.bus.publishConfigReload();
      assert.equal(reload.subject.tenant_id, 'acme');
      await assert.rejects(open({ nodeId: 'node-x', events: { channel, tenantId: '' } }), /tenant_id/);
    });

    test('config.reload reaches the other handles’ subscribers, not the publisher’s', async () => {
      const a = await track(open({ nodeId: 'node-a' }));
      const b = await track(open({ nodeId: 'node-b' }));
      const atA: unknown[] = [];
      const atB: AuthEvent[] = [];
      a.bus.onConfigReload((event) => atA.push(event));
      const stop = b.bus.onConfigReload((event) => atB.push(event));
      const sent = await a.bus.publishConfigReload({ request_id: 'req-9', actor: 'operator' });
      await eventually('the reload at b', () => atB.length === 1);
      assert.deepEqual(atB[0], sent);
      assert.deepEqual([sent.event_type, sent.subject.auth_id, sent.mutation.kind], ['config.reload', null, 'reload']);
      stop();
      await a.bus.publishConfigReload();
      await eventually('b to hear the second', () => b.bus.stats().received >= 2 && a.bus.stats().own >= 2);
      assert.equal(atB.length, 1, 'unsubscribed');
      assert.equal(atA.length, 0);
    });

    test('a killed LISTEN connection reconnects, and reconciliation repairs every missed change', async () => {
      const name = `auth-test-${randomBytes(4).toString('hex')}`;
      // The deaf handle's timers run on a fake clock: its reconnection waits for the clock to move, so
      // every write below certainly lands while it is away, however loaded the machine (no ping, no poll).
      const clock = new FakeScheduler(Date.now());
      const deaf = await track(
        open({
          nodeId: 'node-deaf',
          scheduler: clock,
          events: { applicationName: name, backoff: { initialMs: 1000, maxMs: 1000 }, pingIntervalMs: 0, reconcileIntervalMs: 0 },
        }),
      );
      const writer = await track(open({ nodeId: 'node-writer' }));
      const managers = [new CredentialManager({ store: deaf }), new CredentialManager({ store: writer })];
      await Promise.all(managers.map((m) => m.start()));
      try {
        const kept = await writer.put(sampleCredential('rc-kept'));
        await writer.put(sampleCredential('rc-deleted'));
        // By id: earlier tests' credentials are in the table too, so a count would hold at once.
        const holdsBoth = (m: CredentialManager) => ['rc-kept', 'rc-deleted'].every((id) => m.list().some((r) => r.id === id));
        await eventually('both managers to hold both', () => managers.every(holdsBoth));

        const killed = await sql(url, 'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [name]);
        assert.equal(killed.rowCount, 1);
        await eventually('the listener to notice', () => deaf.bus.listenerState?.connected === false);
        const heard = deaf.bus.stats().received;
        await writer.put({ ...kept, priority: 42 });
        await writer.delete('rc-deleted');
        for (let i = 0; i < 5; i++) await writer.put(sampleCredential(`rc-new-${i}`));
        assert.deepEqual([deaf.bus.stats().reconnects, deaf.bus.stats().received], [0, heard], 'away for every write');

        // The backoff is at most 1 s: this fires the reconnection.
        await clock.advance(1000);
        await eventually(
          'the reconnection and its reconciliation',
          () => deaf.bus.stats().reconnects === 1 && deaf.bus.stats().reconciliations === 1,
        );
        // Seven missed changes: rc-kept's update, rc-deleted's delete and five creates, none heard.
        assert.deepEqual([deaf.bus.stats().repaired, deaf.bus.stats().received], [7, heard]);
        const view = (m: CredentialManager) => m.list().map((r) => [r.id, r.revision, r.priority]);
        // When they never agree, the failure shows how they differ.
        await eventually('both managers to agree', () => JSON.stringify(view(managers[0]!)) === JSON.stringify(view(managers[1]!))).catch(
          () => assert.deepEqual(view(managers[0]!), view(managers[1]!), 'the deaf manager (actual) and the writer’s (expected) disagree'),
        );
        const [deafView] = managers.map(view);
        assert.deepEqual(
          deafView!.map(([id]) => id as string).filter((id) => id.startsWith('rc-')),
          ['rc-kept', 'rc-new-0', 'rc-new-1', 'rc-new-2', 'rc-new-3', 'rc-new-4'],
        );
        assert.deepEqual(
          deafView!.find(([id]) => id === 'rc-kept'),
          ['rc-kept', 2, 42],
        );
        assert.equal(
          deafView!.some(([id]) => id === 'rc-deleted'),
          false,
        );
        assert.equal(managers[0]!.describe('rc-new-4').revision, 1);
      } finally {
        await Promise.all(managers.map((m) => m.close()));
      }
    });
  });

  test('several stores opening a fresh schema at once apply each migration exactly once', async () => {
    const fresh = await postgresForTests(import.meta.url);
    assert.ok(fresh.available);
    const stores = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        PostgresCredentialStore.open({ connection: fresh.url, max: 1, nodeId: `n${i}`, encryption: { key: KEY }, events: { channel } }),
      ),
    );
    try {
      const { rows } = await sql(fresh.url, 'SELECT version FROM switchyard_credentials_migrations ORDER BY version');
      assert.deepEqual(
        rows.map((r) => r.version),
        CREDENTIALS_MIGRATIONS.map((m) => m.version),
      );
      await stores[0]!.put(sampleCredential('m'));
      assert.equal((await stores[4]!.get('m'))?.revision, 1);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
}

/** The payload of the first notification on the channel during `action`. */
async function captureOne(url: string, action: () => Promise<unknown>): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const payloads: string[] = [];
  client.on('notification', (message) => payloads.push(message.payload ?? ''));
  await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
  try {
    await action();
    await eventually('a notification', () => payloads.length > 0);
    return payloads[0];
  } finally {
    await client.end();
  }
}
