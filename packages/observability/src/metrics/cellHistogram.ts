/**
 * @module cellHistogram
 * A Prometheus histogram whose observations on the request path are a
 * bucket search and three increments, exported through prom-client's
 * registry like any of its metrics.
 *
 * Why not prom-client's `Histogram`: every `observe()`, even through a
 * labelled child, builds a label object, validates it and hashes it into a
 * string to find the series (about a microsecond each, and garbage; the
 * gateway observes twice per request). Here a series is found once, when
 * its labels are first seen, and the caller keeps it (as `counterCells`
 * does for counters). The exposition is the same: cumulative `_bucket`
 * series with `le`, `+Inf`, `_sum` and `_count`.
 */
import type { Registry } from 'prom-client';

/** One exported sample, in the shape prom-client's registry formats. */
export interface HistogramSample {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
  /** Buckets carry prom-client's (unused) exemplar slot, so the JSON form matches its own too. */
  exemplar?: null;
}

/** One labelled series: what the request path holds and calls. */
export interface HistogramSeries {
  observe(value: number): void;
}

class Series<L extends string> implements HistogramSeries {
  /** Observations per bucket (not cumulative); the last slot is above every bound (`+Inf`). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Record<L, string>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    // NaN or ±Infinity would poison `_sum` forever; prom-client throws on them, a request must not.
    if (!Number.isFinite(value)) return;
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

/** Options of {@link CellHistogram}, as prom-client's `Histogram` takes them. */
export interface CellHistogramOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  buckets: readonly number[];
  registers: Registry[];
}

/** A histogram registered in prom-client's registries, observed through series the caller keeps. */
export class CellHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  /** How prom-client's cluster aggregation merges it (as its own histograms do). */
  readonly aggregator = 'sum' as const;
  private readonly bounds: number[];
  private readonly labelNames: readonly L[];
  private series: Series<L>[] = [];

  constructor(options: CellHistogramOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    this.bounds = [...options.buckets].sort((a, b) => a - b);
    for (const registry of options.registers) registry.registerMetric(this as never);
  }

  /** A new series for `labels`; the caller keeps it (labels must name every label, as in prom-client). */
  labels(labels: Record<L, string>): HistogramSeries {
    for (const name of this.labelNames) {
      if (typeof labels[name] !== 'string') throw new TypeError(`${this.name}: label ${name} is missing`);
    }
    const series = new Series(labels, this.bounds);
    this.series.push(series);
    return series;
  }

  /** The exposition (prom-client's registry calls this at a scrape). */
  get(): { name: string; help: string; type: 'histogram'; values: HistogramSample[]; aggregator: 'sum' } {
    const values: HistogramSample[] = [];
    for (const series of this.series) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += series.counts[i]!;
        values.push({
          metricName: `${this.name}_bucket`,
          exemplar: null,
          labels: { le: this.bounds[i]!, ...series.labels },
          value: cumulative,
        });
      }
      values.push({ metricName: `${this.name}_bucket`, exemplar: null, labels: { le: '+Inf', ...series.labels }, value: series.count });
      values.push({ metricName: `${this.name}_sum`, labels: { ...series.labels }, value: series.sum });
      values.push({ metricName: `${this.name}_count`, labels: { ...series.labels }, value: series.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** Zeroes every series (the registry's `resetMetrics()`); series held by callers keep working. */
  reset(): void {
    for (const series of this.series) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }
}
