import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { eventually, postgresForTests } from '@switchyard/test-support';
import pg from 'pg';
import { runSignInDirectoryContract, sampleSignInRecord } from '../contract.js';
import { PostgresSignInDirectory } from './postgresSignInDirectory.js';

const postgres = await postgresForTests(import.meta.url);
// NOTIFY channels are database-wide: one of this file's own.
const channel = `signin_test_${randomBytes(6).toString('hex')}`;

if (!postgres.available) {
  test('PostgresSignInDirectory', { skip: postgres.skip }, () => {});
} else {
  const { url } = postgres;

  runSignInDirectoryContract('PostgresSignInDirectory', async () => ({
    directory: await PostgresSignInDirectory.open({ connection: url, channel }),
  }));

  test("a cancel requested through one node's handle reaches every node's listener, once committed", async () => {
    const owner = await PostgresSignInDirectory.open({ connection: url, channel });
    const other = await PostgresSignInDirectory.open({ connection: url, channel });
    try {
      const heard: string[] = [];
      owner.onCancelRequest((id) => heard.push(id));
      const record = sampleSignInRecord('node-a');
      await owner.put(record);
      const now = Date.parse(record.started_at);
      assert.equal((await other.requestCancel(record.id, now))?.cancel_requested, true);
      await eventually('the owner to hear the cancel', () => heard.includes(record.id));
      assert.deepEqual(heard, [record.id]);
      assert.equal((await owner.get(record.id, now))?.cancel_requested, true, 'the owner reads the flag it was told of');
    } finally {
      await owner.close();
      await other.close();
    }
  });

  test('a row holds the public status only, and the directory refuses work once closed', async () => {
    const pool = new pg.Pool({ connectionString: url });
    const directory = await PostgresSignInDirectory.open({ pool });
    const record = sampleSignInRecord('node-a');
    await directory.put(record);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT node_id, state, status FROM switchyard_sign_ins WHERE id = $1', [record.id]);
      assert.deepEqual(Object.keys(rows[0].status).sort(), [
        'credential_id',
        'error',
        'finished_at',
        'flow',
        'id',
        'prompt',
        'started_at',
        'state',
      ]);
      assert.deepEqual([rows[0].node_id, rows[0].state], ['node-a', 'pending']);
    } finally {
      await client.end();
    }
    await directory.close();
    await assert.rejects(directory.get(record.id, 0), { code: 'closed' });
    assert.equal(
      (await pool.query('SELECT count(*)::int AS n FROM switchyard_sign_ins WHERE id = $1', [record.id])).rows[0].n,
      1,
      'a given pool stays open',
    );
    await pool.end();
  });

  test('open needs a connection or a pool, and a connection to listen on', async () => {
    await assert.rejects(PostgresSignInDirectory.open({}), { code: 'invalid_config' });
    const pool = new pg.Pool({ connectionString: url });
    await assert.rejects(PostgresSignInDirectory.open({ pool, listen: true }), { code: 'invalid_config' });
    await pool.end();
  });
}
