/**
 * @module usageQuery
 * Reads usage for people and charts: totals per group (key, tenant,
 * provider or model) over a time range, plus the per-bucket series the
 * totals are the sum of, as JSON or CSV. The store does the grouping; this
 * module shapes the answer, so every store answers the same way.
 */
import {
  addCounts,
  emptyCounts,
  type UsageBucket,
  type UsageCounts,
  type UsageGroupBy,
  type UsageSeriesQuery,
  type UsageStore,
} from './usageStore.js';

/** Counters as the API spells them. */
export interface UsageCountsJson {
  requests: number;
  errors: number;
  cache_hits: number;
  input_tokens: number;
  output_tokens: number;
  cost: number;
}

/** One group's totals over the range. */
export interface UsageGroupTotals extends UsageCountsJson {
  group: string;
  /** The key's name for `group_by=key`, else the group itself. */
  label: string;
}

/** One group in one bucket of the series. */
export interface UsageSeriesPoint extends UsageGroupTotals {
  /** The bucket's start (ISO 8601). */
  start: string;
}

/** `GET /v0/management/usage`. */
export interface UsageReport {
  /** Inclusive start, ISO 8601. */
  from: string;
  /** Exclusive end, ISO 8601. */
  to: string;
  group_by: UsageGroupBy;
  step_seconds: number;
  /** Everything in the range. */
  total: UsageCountsJson;
  /** Per group, most requests first. */
  groups: UsageGroupTotals[];
  /** Per bucket and group, in time order; buckets with no use are left out. */
  series: UsageSeriesPoint[];
}

/** Options of {@link UsageQuery}. */
export interface UsageQueryOptions {
  store: UsageStore;
  /** Run before each read: the recorder's `flush`, so this node's latest counts are in the answer. */
  beforeRead?: () => Promise<void>;
}

function countsJson(counts: UsageCounts): UsageCountsJson {
  return {
    requests: counts.requests,
    errors: counts.errors,
    cache_hits: counts.cacheHits,
    input_tokens: counts.inputTokens,
    output_tokens: counts.outputTokens,
    // Sums of binary fractions: rounded to a billionth so 0.1 + 0.2 reads 0.3.
    cost: Math.round(counts.cost * 1e9) / 1e9,
  };
}

/**
 * Usage reports over a {@link UsageStore}.
 *
 * @example
 * ```ts
 * const query = new UsageQuery({ store, beforeRead: () => recorder.flush() });
 * const report = await query.report({ from: Date.parse('2026-01-01'), to: Date.parse('2026-01-02'), groupBy: 'tenant', stepMs: 3_600_000 });
 * console.log(report.groups, usageCsv(report));
 * ```
 */
export class UsageQuery {
  constructor(private readonly options: UsageQueryOptions) {}

  async report(query: UsageSeriesQuery): Promise<UsageReport> {
    await this.options.beforeRead?.();
    const buckets = await this.options.store.series(query);
    const total = emptyCounts();
    const groups = new Map<string, { label: string; counts: UsageCounts }>();
    for (const bucket of buckets) {
      addCounts(total, bucket);
      let group = groups.get(bucket.group);
      if (!group) {
        group = { label: bucket.label, counts: emptyCounts() };
        groups.set(bucket.group, group);
      }
      if (bucket.label > group.label) group.label = bucket.label;
      addCounts(group.counts, bucket);
    }
    return {
      from: new Date(query.from).toISOString(),
      to: new Date(query.to).toISOString(),
      group_by: query.groupBy,
      step_seconds: query.stepMs / 1000,
      total: countsJson(total),
      groups: [...groups]
        .map(([group, { label, counts }]) => ({ group, label, ...countsJson(counts) }))
        .sort((a, b) => b.requests - a.requests || (a.group < b.group ? -1 : a.group > b.group ? 1 : 0)),
      series: buckets.map((bucket: UsageBucket) => ({
        start: new Date(bucket.start).toISOString(),
        group: bucket.group,
        label: bucket.label,
        ...countsJson(bucket),
      })),
    };
  }
}

/** The CSV export's columns, in order. */
export const USAGE_CSV_COLUMNS = [
  'start',
  'group_by',
  'group',
  'label',
  'requests',
  'errors',
  'cache_hits',
  'input_tokens',
  'output_tokens',
  'cost',
] as const;

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF, quotes doubled. A text that a
 * spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab or CR first) gets a leading `'` (OWASP's advice on
 * CSV injection): key names and models are whatever an operator or client chose.
 */
export function csvField(value: string | number): string {
  if (typeof value === 'number') return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * The report's series as CSV: a header row, then one row per bucket and group, CRLF line ends.
 *
 * @example
 * ```ts
 * res.setHeader('content-type', 'text/csv; charset=utf-8');
 * res.end(usageCsv(report));
 * ```
 */
export function usageCsv(report: UsageReport): string {
  const lines = [USAGE_CSV_COLUMNS.join(',')];
  for (const point of report.series) {
    lines.push(
      [
        point.start,
        report.group_by,
        point.group,
        point.label,
        point.requests,
        point.errors,
        point.cache_hits,
        point.input_tokens,
        point.output_tokens,
        point.cost,
      ]
        .map(csvField)
        .join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}
