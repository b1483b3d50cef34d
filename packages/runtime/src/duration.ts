/**
 * @module duration
 * The one reader of durations as config files, APIs and upstream headers
 * write them: `250ms`, `30s`, `5m`, `1h30m`, `1d`, `1w`, Go-style `6m0s`, or
 * a bare number of milliseconds. The gateway's config, the credentials'
 * config, the alert rules and the relay's `x-ratelimit-reset-*` headers all
 * read through it, so an input one of them accepts the others accept too.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** One `<amount><unit>` part; `ms` comes before `m` so that `250ms` is not read as `250m` and a stray `s`. */
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/y;

/** Options of {@link durationMs}. */
export interface DurationOptions {
  /**
   * Keep fractions of a millisecond (`1.5ms` is 1.5) instead of rounding a
   * written duration to whole milliseconds. Numbers are never rounded.
   */
  exact?: boolean;
}

/**
 * Milliseconds in `input`, or `undefined` when it is not a duration.
 *
 * - A number is milliseconds: finite and not negative, returned as is.
 * - A string is trimmed, then either whole digits (milliseconds: `"100"` is
 *   100) or one or more `<amount><unit>` parts with no space between them,
 *   units `ms`, `s`, `m`, `h`, `d` and `w` (a week, 7 days), amounts with an
 *   optional fraction (`1.5s`). The parts add up: `1h30m`, `6m0s`.
 *
 * @example
 * ```ts
 * durationMs('1h30m'); // 5_400_000
 * durationMs('1w'); // 604_800_000
 * durationMs('100'); // 100
 * durationMs('1.5ms', { exact: true }); // 1.5
 * durationMs('soon'); // undefined
 * ```
 */
export function durationMs(input: string | number, options: DurationOptions = {}): number | undefined {
  if (typeof input === 'number') return Number.isFinite(input) && input >= 0 ? input : undefined;
  if (typeof input !== 'string') return undefined;
  const text = input.trim();
  if (text.length === 0) return undefined;
  if (/^\d+$/.test(text)) return Number(text);
  let total = 0;
  let at = 0;
  while (at < text.length) {
    PART.lastIndex = at;
    const match = PART.exec(text);
    if (!match) return undefined;
    total += Number(match[1]) * UNIT_MS[match[2]!]!;
    at = PART.lastIndex;
  }
  return options.exact ? total : Math.round(total);
}
