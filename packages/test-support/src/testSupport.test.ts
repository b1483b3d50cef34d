import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { inCI, missing, postgresForTests, requireChromium, requirePromtool } from './index.js';

describe('requirements', () => {
  test('CI detection treats unset, empty, 0 and false as not CI', () => {
    assert.equal(inCI({}), false);
    assert.equal(inCI({ CI: '' }), false);
    assert.equal(inCI({ CI: '0' }), false);
    assert.equal(inCI({ CI: 'false' }), false);
    assert.equal(inCI({ CI: 'true' }), true);
    assert.equal(inCI({ CI: '1' }), true);
  });

  test('a missing dependency skips with a how-to outside CI and throws under CI', () => {
    assert.deepEqual(missing('X is gone', 'Install X.', {}), { available: false, skip: 'X is gone. Install X.' });
    assert.throws(() => missing('X is gone', 'Install X.', { CI: 'true' }), /CI requires this dependency: X is gone/);
  });

  test('an unreachable PostgreSQL skips with the URL and how to point elsewhere', async () => {
    const result = await postgresForTests(import.meta.url, { SWITCHYARD_TEST_PG_URL: 'postgres://postgres@127.0.0.1:1/none' });
    assert.equal(result.available, false);
    assert.match(String(result.skip), /127\.0\.0\.1:1.*SWITCHYARD_TEST_PG_URL/s);
    await assert.rejects(
      postgresForTests(import.meta.url, { SWITCHYARD_TEST_PG_URL: 'postgres://postgres@127.0.0.1:1/none', CI: 'true' }),
      /CI requires/,
    );
  });

  test('binaries that are not on PATH are reported missing', () => {
    assert.equal(requirePromtool({ PATH: '/nonexistent' }).available, false);
    assert.equal(
      requireChromium({ PATH: '/nonexistent', CHROMIUM_PATH: '/nonexistent/chromium' }).available,
      requireChromium({ PATH: '/nonexistent' }).available,
    );
  });
});

const postgres = await postgresForTests(import.meta.url);

describe('postgresForTests', () => {
  test('gives the file a schema of its own, used by default', { skip: postgres.skip }, async () => {
    if (!postgres.available) return;
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      await client.query('CREATE TABLE probe (id int)');
      const { rows } = await client.query<{ schema: string }>('SELECT current_schema() AS schema');
      assert.equal(rows[0]?.schema, postgres.schema);
      const { rows: tables } = await client.query('SELECT table_schema FROM information_schema.tables WHERE table_name = $1', ['probe']);
      assert.deepEqual(
        tables.map((t) => t.table_schema),
        [postgres.schema],
      );
    } finally {
      await client.end();
    }
  });
});

const promtool = requirePromtool();
test('promtool checks metrics text', { skip: promtool.skip }, () => {
  if (!promtool.available) return;
  promtool.checkMetrics('# HELP svc_probe_total A probe.\n# TYPE svc_probe_total counter\nsvc_probe_total 1\n');
  assert.throws(() => promtool.checkMetrics('svc bad{ 1\n'));
});
