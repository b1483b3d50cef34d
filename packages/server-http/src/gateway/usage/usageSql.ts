/**
 * @module usageSql
 * What the SQLite and PostgreSQL usage stores share: the column each
 * `group_by` reads (a fixed map, never text from a request), the merging of
 * a batch's rows that name the same minute and dimensions (one upsert may
 * touch a row only once), and the reading of an aggregate row back into a
 * bucket (PostgreSQL returns sums of BIGINT as text).
 */

import type { UsageBucket, UsageGroupBy, UsageRollup } from '@switchyard/observability';
import { addCounts, compareBuckets, rollupId } from '@switchyard/observability/usage';

/** The column a `group_by` groups on. */
export const GROUP_COLUMNS: Record<UsageGroupBy, string> = {
  key: 'key_id',
  tenant: 'tenant',
  provider: 'provider',
  model: 'model',
};

/** The counter columns, in the order the stores write them. */
export const COUNTER_COLUMNS = ['requests', 'errors', 'cache_hits', 'input_tokens', 'output_tokens', 'cost'] as const;

/** A batch with the rows of one minute and dimensions merged (the later key name wins). */
export function mergeRollups(rollups: readonly UsageRollup[]): UsageRollup[] {
  const merged = new Map<string, UsageRollup>();
  for (const rollup of rollups) {
    const id = rollupId(rollup.minute, rollup.keyId, rollup.tenant, rollup.provider, rollup.model);
    const row = merged.get(id);
    if (row) {
      addCounts(row, rollup);
      row.keyName = rollup.keyName;
    } else merged.set(id, { ...rollup });
  }
  return [...merged.values()];
}

/** An aggregate row as both stores select it. */
export interface BucketRow {
  start: number | string;
  grp: string;
  label: string;
  requests: number | string;
  errors: number | string;
  cache_hits: number | string;
  input_tokens: number | string;
  output_tokens: number | string;
  cost: number | string;
}

/** The SELECT list of a grouped read: `$from`, `$step` are the placeholders of the store's dialect. */
export function seriesSelect(groupBy: UsageGroupBy, from: string, step: string, labelOf: (column: string) => string): string {
  const column = GROUP_COLUMNS[groupBy];
  const label = groupBy === 'key' ? labelOf('key_name') : column;
  return `SELECT ${from} + CAST((minute - ${from}) / ${step} AS BIGINT) * ${step} AS start, ${column} AS grp, ${label} AS label,
    SUM(requests) AS requests, SUM(errors) AS errors, SUM(cache_hits) AS cache_hits,
    SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, SUM(cost) AS cost`;
}

/** Rows read back as buckets, in the order every store answers (start, then group, by code unit). */
export function bucketsOf(rows: readonly BucketRow[]): UsageBucket[] {
  return rows
    .map((row) => ({
      start: Number(row.start),
      group: row.grp,
      label: row.label,
      requests: Number(row.requests),
      errors: Number(row.errors),
      cacheHits: Number(row.cache_hits),
      inputTokens: Number(row.input_tokens),
      outputTokens: Number(row.output_tokens),
      cost: Number(row.cost),
    }))
    .sort(compareBuckets);
}
