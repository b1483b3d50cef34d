import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { makeWorkflow, satisfyWorkPackageGates } from '../../test/helpers.js';
import { SqliteWorkflowStore } from '../sqlite.js';

const run = promisify(execFile);
const auditChainBin = fileURLToPath(new URL('../../../audit-chain/src/bin.ts', import.meta.url));
const dir = await mkdtemp(join(tmpdir(), 'workflow-audit-'));
after(() => rm(dir, { recursive: true, force: true }));

async function busyFeature(workflow: ReturnType<typeof makeWorkflow>['workflow']) {
  await workflow.createFeature({ slug: '001-login', title: 'Login', actor: 'alice' });
  await workflow.advance('001-login', 'specify', { actor: 'alice' });
  await workflow.createWorkPackage('001-login', { title: 'form', actor: 'bob' });
  await satisfyWorkPackageGates(workflow, '001-login', 1);
  for (const to of ['DOING', 'REVIEW', 'DONE']) await workflow.transitionWorkPackage('001-login', 1, { to, actor: 'bob' });
}

test('every applied change appends one entry of the documented shape', async () => {
  const { workflow } = makeWorkflow();
  await busyFeature(workflow);
  const entries = await workflow.audit.entries('001-login');
  assert.deepEqual(
    entries.map((e) => [e.id, e.wp_sequence, e.actor, e.transition, e.action]),
    [
      [1, null, 'alice', 'NONE -> CREATED', 'feature_created'],
      [2, null, 'alice', 'CREATED -> SPECIFIED', 'transition'],
      [3, 1, 'bob', 'NONE -> PLANNED', 'work_package_created'],
      [4, 1, 'ci', 'PLANNED -> PLANNED', 'evidence_attached'],
      [5, 1, 'reviewer', 'PLANNED -> PLANNED', 'evidence_attached'],
      [6, 1, 'bob', 'PLANNED -> DOING', 'transition'],
      [7, 1, 'bob', 'DOING -> REVIEW', 'transition'],
      [8, 1, 'bob', 'REVIEW -> DONE', 'transition'],
    ],
  );
  for (const e of entries) {
    for (const key of ['id', 'feature_slug', 'wp_sequence', 'timestamp', 'actor', 'transition', 'evidence_refs', 'prev_hash', 'hash'])
      assert.ok(key in e, key);
    assert.equal(e.feature_slug, '001-login');
    assert.match(e.hash, /^[0-9a-f]{64}$/);
  }
  assert.equal(entries[2]!.prev_hash, entries[1]!.hash);
  assert.deepEqual(entries[6]!.evidence_refs, [entries[3]!.evidence_refs[0]]);
  assert.deepEqual(await workflow.audit.entries('001-login', { limit: 2 }).then((l) => l.map((e) => e.id)), [7, 8]);
  assert.deepEqual(await workflow.audit.verify('001-login'), {
    valid: true,
    entries_verified: 8,
    first_invalid_id: null,
    error_message: null,
    error_code: null,
    root: (await workflow.audit.log('001-login').head()).root,
    origin: 'workflow:shop/001-login',
  });
});

test('the JSONL export is accepted by the audit-chain CLI, and an edited export is not', async () => {
  const { workflow } = makeWorkflow();
  await busyFeature(workflow);
  const file = join(dir, 'export.jsonl');
  await writeFile(file, await workflow.audit.exportJsonl('001-login'));
  const ok = await run(process.execPath, [auditChainBin, 'verify', file, '--origin', 'workflow:shop/001-login', '--json']);
  const result = JSON.parse(ok.stdout);
  assert.equal(result.valid, true);
  assert.equal(result.entries_verified, 8);
  const tampered = join(dir, 'tampered.jsonl');
  await writeFile(tampered, (await workflow.audit.exportJsonl('001-login')).replace('"actor":"bob"', '"actor":"eve"'));
  await assert.rejects(
    run(process.execPath, [auditChainBin, 'verify', tampered, '--origin', 'workflow:shop/001-login']),
    (e: { code: number }) => e.code === 1,
  );
  // Replayed under another feature's origin, the chain fails at its genesis.
  await assert.rejects(
    run(process.execPath, [auditChainBin, 'verify', file, '--origin', 'workflow:shop/002-other']),
    (e: { code: number }) => e.code === 1,
  );
});

test('an entry edited in the SQLite table fails verification at that entry', async () => {
  const path = join(dir, 'tamper.db');
  const store = await SqliteWorkflowStore.open({ path });
  const { workflow } = makeWorkflow(store);
  await busyFeature(workflow);
  await store.close();
  const db = new Database(path);
  const row = db.prepare("SELECT line FROM audit_entries WHERE chain = '001-login' AND id = 6").get() as { line: string };
  db.prepare("UPDATE audit_entries SET line = ? WHERE chain = '001-login' AND id = 6").run(
    row.line.replace('"actor":"bob"', '"actor":"eve"'),
  );
  db.close();
  const reopened = await SqliteWorkflowStore.open({ path });
  const result = await makeWorkflow(reopened).workflow.audit.verify('001-login');
  await reopened.close();
  assert.equal(result.valid, false);
  assert.equal(result.first_invalid_id, 6);
  assert.equal(result.entries_verified, 5);
  assert.equal(result.error_code, 'HASH_MISMATCH');
});

test('audit:query over every feature: where, group-by, order-by, limit', async () => {
  const { workflow, clock } = makeWorkflow();
  await busyFeature(workflow);
  await clock.advance(60_000);
  await workflow.createFeature({ slug: '002-search', title: 'Search', actor: 'carol' });
  await workflow.transitionFeature('002-search', { to: 'RESEARCHED', actor: 'carol', force: true });
  const transitions = await workflow.audit.query(undefined, {
    where: "action = transition AND actor IN ('bob', 'carol')",
    orderBy: 'timestamp desc, id desc',
  });
  assert.deepEqual(
    transitions.map((e) => `${e.feature_slug}#${e.id} ${e.transition}`),
    ['002-search#2 CREATED -> RESEARCHED', '001-login#8 REVIEW -> DONE', '001-login#7 DOING -> REVIEW', '001-login#6 PLANNED -> DOING'],
  );
  assert.deepEqual(await workflow.audit.query(undefined, { where: 'forced = true' }).then((r) => r.map((e) => e.feature_slug)), [
    '002-search',
  ]);
  assert.deepEqual(await workflow.audit.query('001-login', { groupBy: 'actor', orderBy: 'count desc, actor' }), [
    { actor: 'bob', count: 4 },
    { actor: 'alice', count: 2 },
    { actor: 'ci', count: 1 },
    { actor: 'reviewer', count: 1 },
  ]);
  assert.deepEqual(await workflow.audit.query('001-login', { where: 'wp_sequence IS NULL', groupBy: 'to' }), [
    { to: 'CREATED', count: 1 },
    { to: 'SPECIFIED', count: 1 },
  ]);
  assert.deepEqual(
    await workflow.audit.query('001-login', { where: "to = DONE OR transition ~ 'review'", limit: 1 }).then((r) => r.map((e) => e.id)),
    [7],
  );
});
