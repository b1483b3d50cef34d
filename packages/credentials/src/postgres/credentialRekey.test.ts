import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, beforeEach, describe, test } from 'node:test';
import { eventually, postgresForTests, sqlOnce as sql } from '@switchyard/test-support';
import pg from 'pg';
import { sampleCredential } from '../contract.js';
import { generateEncryptionKey, parseEncryptionKey } from '../encryption.js';
import { CredentialsError } from '../errors.js';
import type { PostgresRekeyProgress } from './credentialRekey.js';
import { encodeRow } from './credentialRows.js';
import { PostgresCredentialStore } from './postgresCredentialStore.js';

const postgres = await postgresForTests(import.meta.url);
const channel = `rekey_test_${randomBytes(6).toString('hex')}`;
const OLD_KEY = generateEncryptionKey();
const NEW_KEY = generateEncryptionKey();
const STRANGER_KEY = generateEncryptionKey();
const oldKeyId = parseEncryptionKey(OLD_KEY).id;
const newKeyId = parseEncryptionKey(NEW_KEY).id;

if (!postgres.available) {
  test('PostgresCredentialStore.rekey', { skip: postgres.skip }, () => {});
} else {
  const { url } = postgres;
  const opened: PostgresCredentialStore[] = [];
  const open = async (key: string, previousKeys: string[] = [], nodeId = 'node-old') => {
    const store = await PostgresCredentialStore.open({
      connection: url,
      max: 3,
      nodeId,
      encryption: { key, previousKeys },
      events: { channel, reconcileIntervalMs: 0 },
    });
    opened.push(store);
    return store;
  };
  after(() => Promise.all(opened.map((store) => store.close())));

  const ids = (n: number) => Array.from({ length: n }, (_, i) => `c-${String(i + 1).padStart(2, '0')}`);
  /** Each row's key id, revision and raw secrets, by id. */
  const rowsAtRest = async () => {
    const { rows } = await sql(url, 'SELECT id, revision, secrets FROM switchyard_credentials WHERE NOT deleted ORDER BY id');
    return new Map(
      rows.map((row) => [row.id as string, { keyId: row.secrets.key_id as string, revision: Number(row.revision), secrets: row.secrets }]),
    );
  };
  const keyIds = async () => [...(await rowsAtRest()).entries()].map(([id, row]) => `${id}:${row.keyId === newKeyId ? 'new' : 'old'}`);

  describe('PostgresCredentialStore.rekey', () => {
    beforeEach(async () => {
      await (await open(OLD_KEY)).close();
      await sql(url, 'TRUNCATE switchyard_credentials');
    });

    test('moves every row to the new key in batches, keeping content and revisions; a second run has nothing to do', async () => {
      const writer = await open(OLD_KEY);
      for (const id of ids(6)) await writer.put(sampleCredential(id));
      const refreshed = await writer.put(
        sampleCredential('oauth-1', {
          provider: 'code-assistant',
          type: 'oauth',
          refresh_token: 'rt-oauth-1',
          oauth: { flow: 'code-assistant', params: { api_base_url: 'https://api.example' }, secrets: { client_secret: 'cs-1' } },
        }),
      );
      await writer.put(refreshed); // revision 2: revisions must survive the rekey as they are
      await writer.put(sampleCredential('gone'));
      await writer.delete('gone');
      const before = await rowsAtRest();
      const credentialsBefore = await writer.list();
      const progress: PostgresRekeyProgress[] = [];

      const rekeyer = await open(OLD_KEY, [], 'rekey');
      const report = await rekeyer.rekey(NEW_KEY, { batchSize: 3, onProgress: (p) => void progress.push(p) });

      assert.deepEqual(report, { key_id: newKeyId, rekeyed: 7, already_current: 0, batches: 3 });
      assert.deepEqual(progress, [
        { rekeyed: 3, pending: 7 },
        { rekeyed: 6, pending: 7 },
        { rekeyed: 7, pending: 7 },
      ]);
      const after = await rowsAtRest();
      for (const [id, row] of after) {
        assert.equal(row.keyId, newKeyId, id);
        assert.equal(row.revision, before.get(id)!.revision, `${id} keeps its revision`);
      }
      const newOnly = await open(NEW_KEY, [], 'node-new');
      assert.deepEqual(await newOnly.list(), credentialsBefore, 'the new key alone reads every credential, unchanged');
      const oauth = await newOnly.get('oauth-1');
      assert.deepEqual([oauth?.refresh_token, oauth?.oauth?.secrets], ['rt-oauth-1', { client_secret: 'cs-1' }]);

      await rekeyer.put(sampleCredential('after-rekey'));
      assert.equal((await rowsAtRest()).get('after-rekey')?.keyId, newKeyId, 'the rekeying handle now writes with the new key');
      assert.equal(rekeyer.keyId, newKeyId);
      assert.deepEqual(await rekeyer.rekey(NEW_KEY), { key_id: newKeyId, rekeyed: 0, already_current: 8, batches: 0 });
    });

    test('a row no configured key can open makes it refuse, naming the row, before writing anything', async () => {
      const writer = await open(OLD_KEY);
      for (const id of ids(4)) await writer.put(sampleCredential(id));
      const stranger = await open(STRANGER_KEY, [], 'node-stranger');
      await stranger.put(sampleCredential('foreign-1'));
      const before = await rowsAtRest();

      const rekeyer = await open(OLD_KEY, [], 'rekey');
      await assert.rejects(rekeyer.rekey(NEW_KEY, { batchSize: 2 }), (error: unknown) => {
        assert.ok(error instanceof CredentialsError);
        assert.equal(error.code, 'decryption_failed');
        assert.match(error.message, /before writing anything: 1 credential row\(s\).*foreign-1 \(.*wrong key\)/);
        assert.doesNotMatch(error.message, /c-0\d/, 'readable rows are not named');
        return true;
      });
      assert.deepEqual(await rowsAtRest(), before, 'no row was touched');
      assert.equal(rekeyer.keyId, oldKeyId, 'a refused rekey leaves the handle on its key');
    });

    test('a failed batch rolls back alone; running it again, as a node on the new key, finishes the job', async () => {
      const writer = await open(OLD_KEY);
      for (const id of ids(7)) await writer.put(sampleCredential(id));
      // The third batch (c-05, c-06) fails in the database, as a connection dropped mid-rekey would.
      await sql(
        url,
        `CREATE FUNCTION refuse_c05() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'simulated failure'; END $$`,
      );
      await sql(
        url,
        `CREATE TRIGGER refuse_c05 BEFORE UPDATE ON switchyard_credentials FOR EACH ROW WHEN (NEW.id = 'c-05') EXECUTE FUNCTION refuse_c05()`,
      );
      try {
        const rekeyer = await open(OLD_KEY, [], 'rekey');
        await assert.rejects(rekeyer.rekey(NEW_KEY, { batchSize: 2 }), (error: unknown) => {
          assert.ok(error instanceof CredentialsError);
          assert.equal(error.code, 'store_failed');
          assert.match(error.message, /after "c-04" failed and was rolled back \(simulated failure\).*run rekey again/);
          return true;
        });
      } finally {
        await sql(url, 'DROP TRIGGER refuse_c05 ON switchyard_credentials');
        await sql(url, 'DROP FUNCTION refuse_c05()');
      }
      assert.deepEqual(await keyIds(), ['c-01:new', 'c-02:new', 'c-03:new', 'c-04:new', 'c-05:old', 'c-06:old', 'c-07:old']);

      const resumed = await open(NEW_KEY, [OLD_KEY], 'rekey-again');
      assert.deepEqual(await resumed.rekey(NEW_KEY, { batchSize: 2 }), { key_id: newKeyId, rekeyed: 3, already_current: 4, batches: 2 });
      const newOnly = await open(NEW_KEY, [], 'node-new');
      assert.deepEqual(
        (await newOnly.list()).map((c) => c.token),
        ids(7).map((id) => `sk-contract-${id}-secret`),
      );
    });

    test('a node writing a row the rekey has not reached yet keeps its write', async () => {
      const writer = await open(OLD_KEY);
      for (const id of ids(6)) await writer.put(sampleCredential(id));
      // A node already switched to the new key, with the old one in previous_keys: the recommended order.
      const node = await open(NEW_KEY, [OLD_KEY], 'node-b');
      const rekeyer = await open(OLD_KEY, [], 'rekey');
      let wrote = false;
      const report = await rekeyer.rekey(NEW_KEY, {
        batchSize: 2,
        // After the first batch (c-01, c-02), before the rekey reaches c-06.
        onProgress: async () => {
          if (wrote) return;
          wrote = true;
          await node.put({ ...(await node.get('c-06'))!, token: 'sk-refreshed-by-b' });
        },
      });
      assert.equal(report.rekeyed, 5, 'c-06 was under the new key when its batch came');
      const c06 = await open(NEW_KEY, [], 'node-new').then((s) => s.get('c-06'));
      assert.deepEqual([c06?.token, c06?.revision], ['sk-refreshed-by-b', 2]);
      assert.deepEqual(
        await keyIds(),
        ids(6).map((id) => `${id}:new`),
      );
    });

    test('a write holding a row lock is waited for, and the rekey seals what it committed, not what it read before', async () => {
      const writer = await open(OLD_KEY);
      for (const id of ids(6)) await writer.put(sampleCredential(id));
      const original = (await writer.get('c-03'))!;
      const other = new pg.Client({ connectionString: url });
      await other.connect();
      try {
        // Another node's refresh of c-03 is in flight (still sealing with the old key): it holds the row.
        await other.query('BEGIN');
        await other.query("SELECT 1 FROM switchyard_credentials WHERE id = 'c-03' FOR UPDATE");
        const progress: PostgresRekeyProgress[] = [];
        const rekeyer = await open(OLD_KEY, [], 'rekey');
        const rekeying = rekeyer.rekey(NEW_KEY, { batchSize: 2, onProgress: (p) => void progress.push(p) });
        await eventually('the rekey to move every other row', () => progress.at(-1)?.rekeyed === 5);

        const refreshed = { ...original, token: 'sk-refreshed-meanwhile' };
        const { record, secrets } = encodeRow(refreshed, parseEncryptionKey(OLD_KEY));
        await other.query("UPDATE switchyard_credentials SET revision = revision + 1, record = $1, secrets = $2 WHERE id = 'c-03'", [
          record,
          secrets,
        ]);
        await other.query('COMMIT');

        const report = await rekeying;
        assert.equal(report.rekeyed, 6);
        const newOnly = await open(NEW_KEY, [], 'node-new');
        const c03 = await newOnly.get('c-03');
        assert.deepEqual([c03?.token, c03?.revision], ['sk-refreshed-meanwhile', original.revision + 1]);
        assert.deepEqual(
          await keyIds(),
          ids(6).map((id) => `${id}:new`),
        );
      } finally {
        await other.query('ROLLBACK').catch(() => undefined);
        await other.end();
      }
    });

    test('a node that keeps sealing with the old key makes it end with rekey_incomplete, naming the rows', async () => {
      const writer = await open(OLD_KEY);
      for (const id of ids(4)) await writer.put(sampleCredential(id));
      const reader = await open(NEW_KEY, [OLD_KEY], 'reader');
      const rekeyer = await open(OLD_KEY, [], 'rekey');
      await assert.rejects(
        rekeyer.rekey(NEW_KEY, {
          batchSize: 10,
          // After every batch, behind the cursor of both passes, a node still on the old key writes c-01 again.
          onProgress: async () => {
            await writer.put({ ...(await reader.get('c-01'))!, priority: 3 });
          },
        }),
        (error: unknown) => {
          assert.ok(error instanceof CredentialsError);
          assert.equal(error.code, 'rekey_incomplete');
          assert.match(
            error.message,
            /rekey moved 5 row\(s\), but 1 were written under another key meanwhile \(c-01\).*still has the old key/,
          );
          return true;
        },
      );
      assert.deepEqual(await keyIds(), ['c-01:old', 'c-02:new', 'c-03:new', 'c-04:new']);
    });

    test('refuses a batch size that is not a positive integer', async () => {
      const rekeyer = await open(OLD_KEY);
      await assert.rejects(rekeyer.rekey(NEW_KEY, { batchSize: 0 }), { code: 'invalid_argument' });
    });
  });
}
