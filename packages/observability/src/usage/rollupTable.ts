/**
 * @module rollupTable
 * The recorder's in-memory rollups: minute → key → tenant → provider →
 * model → row, in nested Maps. A request finds its row with five lookups of
 * values it already holds; a flat Map would need a composite string key built
 * (and hashed) per request, which measured four times slower
 * (bench/observability.bench.ts).
 */
import type { UsageRollup } from './usageStore.js';

type Level<T> = Map<string, T>;

/** Rollups by minute and dimensions, created on first use. */
export class RollupTable {
  private readonly minutes = new Map<number, Level<Level<Level<Level<UsageRollup>>>>>();
  /** Rows held. */
  size = 0;

  /** The row of one minute and dimensions (created zeroed; its key name updated to the latest). */
  row(minute: number, keyId: string, keyName: string, tenant: string, provider: string, model: string): UsageRollup {
    const byKey = child(this.minutes, minute);
    const byTenant = child(byKey, keyId);
    const byProvider = child(byTenant, tenant);
    const byModel = child(byProvider, provider);
    let row = byModel.get(model);
    if (!row) {
      row = {
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
      byModel.set(model, row);
      this.size++;
    } else if (row.keyName !== keyName) row.keyName = keyName;
    return row;
  }

  /** Every row held. */
  rows(): UsageRollup[] {
    const rows: UsageRollup[] = [];
    for (const byKey of this.minutes.values())
      for (const byTenant of byKey.values())
        for (const byProvider of byTenant.values())
          for (const byModel of byProvider.values()) for (const row of byModel.values()) rows.push(row);
    return rows;
  }
}

function child<K, T>(map: Map<K, Map<string, T>>, key: K): Map<string, T> {
  let next = map.get(key);
  if (!next) {
    next = new Map();
    map.set(key, next);
  }
  return next;
}
