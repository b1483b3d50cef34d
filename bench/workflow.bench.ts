/**
 * Benchmark of @switchyard/workflow: audited, gated transitions per second on
 * the memory and SQLite stores, against a bare audit-chain append (the floor
 * of any audited change) measured in the same run; and audit:query over a
 * large trail against a plain Array.filter.
 *
 *   pnpm bench workflow [--smoke]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog, MemoryAuditStore } from '@switchyard/audit-chain';
import { MemoryWorkflowStore, runQuery, Workflow, type WorkflowStore } from '@switchyard/workflow';
import { SqliteWorkflowStore } from '@switchyard/workflow/sqlite';
import { type Row, report, SMOKE, throughputAsync } from './lib.js';

const BATCH = SMOKE ? 20 : 200;

const log = new AuditLog(new MemoryAuditStore(), { origin: 'bench:workflow/baseline' });
const baseline = await throughputAsync(async () => {
  for (let i = 0; i < BATCH; i++)
    await log.append({
      feature_slug: 'f',
      wp_sequence: 1,
      actor: 'bench',
      transition: 'DOING -> BLOCKED',
      evidence_refs: [],
      action: 'transition',
    });
  return BATCH;
});

/** Flips one work package DOING <-> BLOCKED: a full gated, audited transition each time. */
async function transitions(store: WorkflowStore): Promise<number> {
  const workflow = new Workflow({ store, repoName: 'bench' });
  await workflow.createFeature({ slug: 'f', title: 'F', actor: 'bench' });
  await workflow.createWorkPackage('f', { title: 'w', actor: 'bench' });
  await workflow.transitionWorkPackage('f', 1, { to: 'DOING', actor: 'bench' });
  let state = 'DOING';
  return throughputAsync(async () => {
    for (let i = 0; i < BATCH; i++) {
      state = state === 'DOING' ? 'BLOCKED' : 'DOING';
      await workflow.transitionWorkPackage('f', 1, { to: state, actor: 'bench' });
    }
    return BATCH;
  });
}

const rows: Row[] = [{ name: 'baseline: AuditLog.append on MemoryAuditStore', value: baseline, unit: 'entries/s' }];
rows.push({
  name: 'work-package transition, memory store',
  value: await transitions(new MemoryWorkflowStore()),
  unit: 'transitions/s',
  baseline,
});
const dir = mkdtempSync(join(tmpdir(), 'workflow-bench-'));
try {
  const sqlite = await SqliteWorkflowStore.open({ path: join(dir, 'bench.db') });
  rows.push({
    name: 'work-package transition, SQLite (WAL, synchronous=FULL)',
    value: await transitions(sqlite),
    unit: 'transitions/s',
    baseline,
  });
  await sqlite.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const N = SMOKE ? 2_000 : 100_000;
const entries = Array.from({ length: N }, (_, i) => ({
  id: i + 1,
  feature_slug: `f-${i % 20}`,
  wp_sequence: i % 7 === 0 ? null : (i % 9) + 1,
  timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  actor: ['alice', 'bob', 'carol', 'ci'][i % 4]!,
  transition: ['PLANNED -> DOING', 'DOING -> REVIEW', 'REVIEW -> DONE'][i % 3]!,
  evidence_refs: [i],
  action: 'transition',
}));
const filterBaseline = await throughputAsync(
  async () => entries.filter((e) => e.actor === 'bob' && e.transition.endsWith('DONE')).length * 0 + N,
);
rows.push({ name: `baseline: Array.filter over ${N.toLocaleString('en-US')} entries`, value: filterBaseline, unit: 'entries/s' });
rows.push({
  name: 'audit:query --where "actor = bob AND to = DONE"',
  value: await throughputAsync(async () => runQuery(entries, { where: 'actor = bob AND to = DONE' }).length * 0 + N),
  unit: 'entries/s',
  baseline: filterBaseline,
});
rows.push({
  name: 'audit:query --group-by actor,to --order-by count desc',
  value: await throughputAsync(async () => runQuery(entries, { groupBy: 'actor, to', orderBy: 'count desc' }).length * 0 + N),
  unit: 'entries/s',
  baseline: filterBaseline,
});
report('workflow', rows);
