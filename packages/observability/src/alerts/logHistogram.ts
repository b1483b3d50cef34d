/**
 * @module logHistogram
 * A fixed-size histogram with logarithmic bins (5% wide), for quantiles of
 * latency over a sliding window: recording is O(1), memory is constant, and
 * a quantile is off by at most about 2.5% of the value. Windows merge by
 * adding counts.
 */

const GROWTH = 1.05;
const LOG_GROWTH = Math.log(GROWTH);
/** 1.05^330 ms ≈ 2.75 h: longer values land in the last bin. */
export const LOG_HISTOGRAM_BINS = 330;

/** Bin of a value in milliseconds (values under 1 ms share bin 0). */
export function binOf(ms: number): number {
  if (!(ms > 1)) return 0;
  return Math.min(LOG_HISTOGRAM_BINS - 1, Math.floor(Math.log(ms) / LOG_GROWTH));
}

/** The value a bin stands for: its geometric middle, in milliseconds. */
export function binValue(bin: number): number {
  return bin === 0 ? 1 : GROWTH ** (bin + 0.5);
}

/**
 * The `q` quantile (0–1) of the merged counts, in milliseconds, or
 * `undefined` when there are none.
 *
 * @example
 * ```ts
 * const counts = new Float64Array(LOG_HISTOGRAM_BINS);
 * counts[binOf(120)]++;
 * quantileOf(counts, 0.95); // ≈ 120
 * ```
 */
export function quantileOf(counts: Float64Array, q: number): number | undefined {
  let total = 0;
  for (let i = 0; i < counts.length; i++) total += counts[i]!;
  if (total === 0) return undefined;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i]!;
    if (seen >= rank) return binValue(i);
  }
  return binValue(counts.length - 1);
}
