/**
 * @module counterCells
 * Counting on the request path in plain numbers, handed to prom-client at
 * scrape time. prom-client validates and hashes the label set on every
 * `inc()`, even through a labelled child; a cell is a field increment, and
 * the registry catches up in the counter's `collect()` (only the delta
 * since the last scrape is added, so the counter stays monotonic).
 */
import type { Counter } from 'prom-client';

/** One labelled series. Increment `value`; the counter learns of it at the next scrape. */
export interface CounterCell {
  value: number;
}

/** The counters one request moves, per labelled value (a provider and model pair, a tenant, a client key). */
export interface RequestCells {
  success: CounterCell;
  error: CounterCell;
  /** The client closed the request first: neither a success nor anyone's error (`status="client_closed"`). */
  clientClosed: CounterCell;
  tokensIn: CounterCell;
  tokensOut: CounterCell;
  cacheHits: CounterCell;
  cost: CounterCell;
}

interface Entry<L extends string> {
  labels: Record<L, string>;
  cell: CounterCell;
  exported: number;
}

/**
 * The cells of one counter, created on first use.
 *
 * @example
 * ```ts
 * const cells = new CounterCells<'provider'>();
 * const counter = new Counter({ name: 'x_total', help: 'x', labelNames: ['provider'], collect() { cells.flushInto(this); } });
 * cells.cell('openai', () => ({ provider: 'openai' })).value++;
 * ```
 */
export class CounterCells<L extends string> {
  private readonly entries: Entry<L>[] = [];

  /** A new cell for `labels`; the caller keeps it (it is the caller's cache that makes lookups cheap). */
  create(labels: Record<L, string>): CounterCell {
    const cell = { value: 0 };
    this.entries.push({ labels, cell, exported: 0 });
    return cell;
  }

  /** Adds what each cell gained since the last call to `counter`. */
  flushInto(counter: Counter<L>): void {
    for (const entry of this.entries) {
      const delta = entry.cell.value - entry.exported;
      if (delta <= 0) continue;
      counter.inc(entry.labels, delta);
      entry.exported = entry.cell.value;
    }
  }
}
