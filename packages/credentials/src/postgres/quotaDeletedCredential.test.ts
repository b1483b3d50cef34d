import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { postgresForTests, sqlOnce } from '@switchyard/test-support';
import pg from 'pg';
import { sampleCredential } from '../contract.js';
import { generateEncryptionKey } from '../encryption.js';
import { PostgresCredentialStore } from './postgresCredentialStore.js';
import { PostgresQuotaStore } from './postgresQuotaStore.js';

const postgres = await postgresForTests(import.meta.url);

if (!postgres.available) {
  test('quota rows of deleted credentials', { skip: postgres.skip }, () => {});
} else {
  const { url } = postgres;
  const tag = randomBytes(4).toString('hex');
  const credentials = await PostgresCredentialStore.open({
    connection: url,
    max: 2,
    nodeId: 'node-test',
    encryption: { key: generateEncryptionKey() },
    events: { channel: `t_auth_${tag}` },
  });
  const quotas = await PostgresQuotaStore.open({ connection: url, max: 4, channel: `t_quota_${tag}`, listen: false });
  after(async () => {
    await quotas.close();
    await credentials.close();
  });
  const period = '2026-07-01T00:00:00.000Z';
  const rowsOf = async (id: string) => ({
    quota: (await sqlOnce(url, 'SELECT used FROM switchyard_quota WHERE id = $1', [id])).rowCount,
    reservations: (await sqlOnce(url, 'SELECT 1 FROM switchyard_quota_reservations WHERE id = $1', [id])).rowCount,
  });
  const reserve = (id: string) =>
    quotas.reserve({ id, reservation: randomUUID(), tokens: 10, limit: 1000, period_start: period, ttlMs: 60_000 });
  const created = async () => {
    const id = `c-${randomUUID()}`;
    await credentials.put(sampleCredential(id, { provider: 'openai' }));
    return id;
  };

  test('deleting a credential removes its quota row and reservations in the same transaction', async () => {
    const id = await created();
    assert.equal((await reserve(id)).admitted, true);
    await quotas.add([{ id, tokens: 5, period_start: period }]);
    assert.deepEqual(await rowsOf(id), { quota: 1, reservations: 1 });
    await credentials.delete(id);
    assert.deepEqual(await rowsOf(id), { quota: 0, reservations: 0 });
  });

  test('usage and admissions that arrive after the delete write no row; a re-created credential counts again', async () => {
    const id = await created();
    await credentials.delete(id);
    const totals = await quotas.add([{ id, tokens: 7, period_start: period, reservations: [randomUUID()] }]);
    assert.equal(totals.has(id), false, 'no total for a deleted credential');
    assert.deepEqual(await reserve(id), { admitted: false, used: 0, reserved: 0, period_start: period });
    await quotas.set(id, { used: 3, period_start: period });
    assert.deepEqual(await rowsOf(id), { quota: 0, reservations: 0 });

    await credentials.put(sampleCredential(id, { provider: 'openai' }));
    assert.deepEqual((await quotas.add([{ id, tokens: 7, period_start: period }])).get(id), { used: 7, period_start: period });
  });

  test('a write racing an uncommitted delete waits for it and then writes no row', async () => {
    const id = await created();
    const deleter = new pg.Client({ connectionString: url });
    await deleter.connect();
    try {
      await deleter.query('BEGIN');
      // What PostgresCredentialStore.delete does, held open so the writes below start while it is in flight.
      await deleter.query('UPDATE switchyard_credentials SET deleted = true, record = NULL, secrets = NULL WHERE id = $1', [id]);
      let settled = 0;
      const add = quotas.add([{ id, tokens: 9, period_start: period }]).finally(() => settled++);
      const admission = reserve(id).finally(() => settled++);
      await sleep(100);
      assert.equal(settled, 0, 'both wait for the delete to commit or roll back');
      await deleter.query('COMMIT');
      assert.equal((await add).has(id), false);
      assert.equal((await admission).admitted, false);
      assert.deepEqual(await rowsOf(id), { quota: 0, reservations: 0 });
    } finally {
      await deleter.end();
    }
  });

  test('a delete racing uncommitted quota writes waits for them and then removes what they wrote', async () => {
    const id = await created();
    const writer = new pg.Client({ connectionString: url });
    await writer.connect();
    try {
      await writer.query('BEGIN');
      // An admission and a usage write of another node, past their check and not yet committed.
      await writer.query('SELECT * FROM switchyard_quota_reserve($1, $2, 10, 1000, $3, 60000)', [id, randomUUID(), period]);
      await writer.query('UPDATE switchyard_quota SET used = used + 5 WHERE id = $1', [id]);
      let deleted = false;
      const deletion = credentials.delete(id).then(() => (deleted = true));
      await sleep(100);
      assert.equal(deleted, false, 'the delete waits for the writes in flight');
      await writer.query('COMMIT');
      await deletion;
      assert.deepEqual(await rowsOf(id), { quota: 0, reservations: 0 });
    } finally {
      await writer.end();
    }
  });

  test("quota writes do not queue behind an update of the credential's own row (a refresh, a rekey batch)", async () => {
    const id = await created();
    const updater = new pg.Client({ connectionString: url });
    await updater.connect();
    try {
      await updater.query('BEGIN');
      await updater.query('UPDATE switchyard_credentials SET updated_at = now() WHERE id = $1', [id]);
      // Writes queued behind the update would wait until the ROLLBACK below, however long: the bound only ends the
      // wait, generously, so that a slow answer on a loaded machine is not taken for a queued one.
      const written = await Promise.race([
        Promise.all([quotas.add([{ id, tokens: 3, period_start: period }]), reserve(id)]).then(() => true),
        sleep(10_000, false, { ref: false }),
      ]);
      assert.equal(written, true, 'the add and the admission answered while the row update was open');
    } finally {
      await updater.query('ROLLBACK').catch(() => undefined);
      await updater.end();
    }
  });

  test('a quota store whose credentials live elsewhere (files) counts ids this database does not hold', async () => {
    const id = `file-${randomUUID()}`;
    assert.deepEqual((await quotas.add([{ id, tokens: 4, period_start: period }])).get(id), { used: 4, period_start: period });
    assert.equal((await reserve(id)).admitted, true);
  });
}
