/**
 * @module usageStore
 * The `UsageStore` port: per-minute usage rollups (requests, errors, cache
 * hits, tokens in and out, cost) by client key, tenant, provider and model,
 * and the in-memory adapter. A store only ever adds: `add` increments rows
 * by this node's deltas, so a batch written twice would count twice, and a
 * node that restarts needs no read-back of what it wrote before. Readers ask
 * for buckets already grouped (`series`), summed over every node that
 * writes to the same store. Durable adapters: SQLite (one node) and
 * PostgreSQL (a cluster), in the gateway server.
 */

/** What usage can be grouped by. */
export const USAGE_GROUP_BYS = ['key', 'tenant', 'provider', 'model'] as const;
/** One of {@link USAGE_GROUP_BYS}. */
export type UsageGroupBy = (typeof USAGE_GROUP_BYS)[number];

/** The length of a rollup, in milliseconds: one minute. */
export const USAGE_MINUTE_MS = 60_000;

/** Who and what a rollup row counts. */
export interface UsageDimensions {
  /** The client key's stable id (`static:<name>` for a key of `api-keys`; `anonymous` when `/v1` is open). */
  keyId: string;
  /** The key's name when the row was counted (a label, not part of the row's identity). */
  keyName: string;
  tenant: string;
  /** The provider of the last attempt; `none` when no provider was tried. */
  provider: string;
  model: string;
}

/** The counters of a rollup. */
export interface UsageCounts {
  requests: number;
  /** Requests that ended in an error (the upstream's or the gateway's); a client that left is no error. */
  errors: number;
  /** Requests answered from the response cache. */
  cacheHits: number;
  inputTokens: number;
  outputTokens: number;
  /** tokens / 1000 × `providers.<p>.cost_per_1k_tokens`, at the price in force when the request ended. */
  cost: number;
}

/** One minute of one (key, tenant, provider, model). */
export interface UsageRollup extends UsageDimensions, UsageCounts {
  /** The minute's start, epoch milliseconds (a multiple of {@link USAGE_MINUTE_MS}). */
  minute: number;
}

/** A grouped read: minutes in `[from, to)`, bucketed every `stepMs` from `from`. */
export interface UsageSeriesQuery {
  /** Epoch ms, a multiple of a minute. */
  from: number;
  /** Epoch ms, exclusive, a multiple of a minute. */
  to: number;
  groupBy: UsageGroupBy;
  /** A multiple of a minute. */
  stepMs: number;
}

/** The counts of one group in one bucket. */
export interface UsageBucket extends UsageCounts {
  /** The bucket's start: `from + k × stepMs`. */
  start: number;
  /** The group's value: a key id, tenant, provider or model. */
  group: string;
  /** For `group_by=key`, a name the key was seen with; otherwise the group itself. */
  label: string;
}

/**
 * Where usage rollups are kept.
 *
 * @example
 * ```ts
 * const store: UsageStore = new MemoryUsageStore();
 * await store.add([{ minute: 0, keyId: 'static:ci', keyName: 'ci', tenant: 'team-a', provider: 'openai', model: 'gpt-4o',
 *   requests: 1, errors: 0, cacheHits: 0, inputTokens: 12, outputTokens: 40, cost: 0.001 }]);
 * await store.series({ from: 0, to: 60_000, groupBy: 'tenant', stepMs: 60_000 }); // [{ start: 0, group: 'team-a', requests: 1, ... }]
 * ```
 */
export interface UsageStore {
  /**
   * Adds each rollup's counts to its row (creating it). Atomic per call: all of it counts, or none. A batch may
   * name one minute and dimensions more than once (a request that ended late gets a row of its own): both add.
   */
  add(rollups: readonly UsageRollup[]): Promise<void>;
  /** Buckets of `query`, summed over every writer, ordered by start then group. Empty buckets are left out. */
  series(query: UsageSeriesQuery): Promise<UsageBucket[]>;
  /** Deletes rows of minutes before `before` (epoch ms); resolves to how many rows went. */
  prune(before: number): Promise<number>;
  close(): Promise<void>;
}

/** Zeroed counters. */
export function emptyCounts(): UsageCounts {
  return { requests: 0, errors: 0, cacheHits: 0, inputTokens: 0, outputTokens: 0, cost: 0 };
}

/** Adds `from`'s counters into `into`. */
export function addCounts(into: UsageCounts, from: UsageCounts): void {
  into.requests += from.requests;
  into.errors += from.errors;
  into.cacheHits += from.cacheHits;
  into.inputTokens += from.inputTokens;
  into.outputTokens += from.outputTokens;
  into.cost += from.cost;
}

/** The dimension a `group_by` reads. */
export function groupValue(row: UsageDimensions, groupBy: UsageGroupBy): string {
  switch (groupBy) {
    case 'key':
      return row.keyId;
    case 'tenant':
      return row.tenant;
    case 'provider':
      return row.provider;
    case 'model':
      return row.model;
  }
}

/** The identity of a rollup row: its minute and every dimension but the key's name. */
export function rollupId(minute: number, keyId: string, tenant: string, provider: string, model: string): string {
  return `${minute}\u0000${keyId}\u0000${tenant}\u0000${provider}\u0000${model}`;
}

/** Orders buckets by start, then group (the order every adapter answers in). */
export function compareBuckets(a: UsageBucket, b: UsageBucket): number {
  return a.start - b.start || (a.group < b.group ? -1 : a.group > b.group ? 1 : 0);
}

/**
 * Usage in this process's memory: tests and embedders; lost on exit.
 *
 * @example
 * ```ts
 * const recorder = new UsageRecorder({ store: new MemoryUsageStore() });
 * ```
 */
export class MemoryUsageStore implements UsageStore {
  private readonly rows = new Map<string, UsageRollup>();

  async add(rollups: readonly UsageRollup[]): Promise<void> {
    for (const rollup of rollups) {
      const id = rollupId(rollup.minute, rollup.keyId, rollup.tenant, rollup.provider, rollup.model);
      const row = this.rows.get(id);
      if (row) {
        addCounts(row, rollup);
        row.keyName = rollup.keyName;
      } else this.rows.set(id, { ...rollup });
    }
  }

  async series(query: UsageSeriesQuery): Promise<UsageBucket[]> {
    const buckets = new Map<string, UsageBucket>();
    for (const row of this.rows.values()) {
      if (row.minute < query.from || row.minute >= query.to) continue;
      const start = query.from + Math.floor((row.minute - query.from) / query.stepMs) * query.stepMs;
      const group = groupValue(row, query.groupBy);
      const id = `${start}\u0000${group}`;
      let bucket = buckets.get(id);
      if (!bucket) {
        bucket = { start, group, label: query.groupBy === 'key' ? row.keyName : group, ...emptyCounts() };
        buckets.set(id, bucket);
      }
      // The same rule as the SQL adapters' MAX(key_name): a stable name when a key was renamed.
      if (query.groupBy === 'key' && row.keyName > bucket.label) bucket.label = row.keyName;
      addCounts(bucket, row);
    }
    return [...buckets.values()].sort(compareBuckets);
  }

  async prune(before: number): Promise<number> {
    let removed = 0;
    for (const [id, row] of this.rows) {
      if (row.minute < before) {
        this.rows.delete(id);
        removed++;
      }
    }
    return removed;
  }

  async close(): Promise<void> {}
}
