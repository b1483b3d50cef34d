/**
 * @module rollupTable
 * The recorder's in-memory rollups: key → tenant → provider → model → the
 * row of those dimensions' latest minute, in nested Maps. A request finds its
 * row with four lookups of values it already holds; a flat Map would need a
 * composite string key built (and hashed) per request, which measured four
 * times slower (bench/observability.bench.ts).
 *
 * The table lives as long as the recorder: a flush takes a copy of each row
 * with counts and zeroes the row in place, so a key in steady use costs one
 * small copy per flush and one row per minute, not four Maps and a row per
 * flush (with 10,000 keys in use, a profile of the whole gateway put the
 * rebuilt table at about 3 µs of every request, with its garbage). A row
 * whose minute has passed moves out of the tree when its dimensions count
 * into a later minute, and is written whole at the next flush; a row left
 * without counts for over a minute is dropped at a flush.
 */
import { USAGE_MINUTE_MS, type UsageRollup } from './usageStore.js';

type Level<T> = Map<string, T>;

/** Rollups by dimensions, each holding its latest minute; rows of earlier minutes wait in a list until taken. */
export class RollupTable {
  private readonly byKey = new Map<string, Level<Level<Level<UsageRollup>>>>();
  /** Rows with counts that are no longer (or never were) their dimensions' latest: written whole at the next take. */
  private closed: UsageRollup[] = [];
  /** The latest minute counted: rows without counts whose minute ended before the previous one are dropped. */
  private latestMinute = Number.NEGATIVE_INFINITY;
  /** Rows with counts not yet taken. */
  size = 0;

  /**
   * The row of one minute and dimensions, its key name updated to the latest. The caller counts at least one
   * request into it (that is what makes a row pending). A row of a minute earlier than its dimensions' latest
   * (a request that ended late) is a row of its own: a batch may then name one minute and dimensions twice.
   */
  row(minute: number, keyId: string, keyName: string, tenant: string, provider: string, model: string): UsageRollup {
    if (minute > this.latestMinute) this.latestMinute = minute;
    const byModel = child(child(child(this.byKey, keyId), tenant), provider);
    let row = byModel.get(model);
    if (row === undefined) {
      row = newRow(minute, keyId, keyName, tenant, provider, model);
      byModel.set(model, row);
    } else if (row.minute !== minute) {
      if (row.requests === 0) row.minute = minute;
      else if (minute > row.minute) {
        this.closed.push(row);
        row = newRow(minute, keyId, keyName, tenant, provider, model);
        byModel.set(model, row);
      } else {
        row = newRow(minute, keyId, keyName, tenant, provider, model);
        this.closed.push(row);
        this.size++;
        return row;
      }
    }
    if (row.keyName !== keyName) row.keyName = keyName;
    if (row.requests === 0) this.size++;
    return row;
  }

  /**
   * Every row with counts, as rows the table no longer touches; the table's own rows are zeroed. Rows that
   * have had no counts since before the previous minute are dropped here, so idle keys cost no memory.
   */
  take(): UsageRollup[] {
    const batch = this.closed;
    this.closed = [];
    const stale = this.latestMinute - USAGE_MINUTE_MS;
    for (const [keyId, byTenant] of this.byKey) {
      for (const [tenant, byProvider] of byTenant) {
        for (const [provider, byModel] of byProvider) {
          for (const [model, row] of byModel) {
            if (row.requests > 0) {
              batch.push({ ...row });
              zero(row);
            } else if (row.minute < stale) byModel.delete(model);
          }
          if (byModel.size === 0) byProvider.delete(provider);
        }
        if (byProvider.size === 0) byTenant.delete(tenant);
      }
      if (byTenant.size === 0) this.byKey.delete(keyId);
    }
    this.size = 0;
    return batch;
  }

  /** Rows held in the tree, with counts or not (what idle-row dropping bounds). */
  get held(): number {
    let held = 0;
    for (const byTenant of this.byKey.values())
      for (const byProvider of byTenant.values()) for (const byModel of byProvider.values()) held += byModel.size;
    return held;
  }
}

function newRow(minute: number, keyId: string, keyName: string, tenant: string, provider: string, model: string): UsageRollup {
  return {
    minute,
    keyId,
    keyName,
    tenant,
    provider,
    model,
    requests: 0,
    errors: 0,
    cacheHits: 0,
    inputTokens: 0,
    outputTokens: 0,
    cost: 0,
  };
}

function zero(row: UsageRollup): void {
  row.requests = 0;
  row.errors = 0;
  row.cacheHits = 0;
  row.inputTokens = 0;
  row.outputTokens = 0;
  row.cost = 0;
}

function child<T>(map: Map<string, Map<string, T>>, key: string): Map<string, T> {
  let next = map.get(key);
  if (next === undefined) {
    next = new Map();
    map.set(key, next);
  }
  return next;
}
