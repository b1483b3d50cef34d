/**
 * @module retryAfter
 * Reads how long an upstream asks us to wait, from `Retry-After` (seconds or
 * an HTTP date), `retry-after-ms`, or OpenAI-style `x-ratelimit-reset-*`
 * durations such as `6m0s` or `250ms`.
 */

import { durationMs } from '@switchyard/runtime';

/** Parses `1h2m3.5s`, `250ms`, `20s` into milliseconds (fractions kept), or undefined; the runtime's {@link durationMs}. */
export function parseGoDuration(text: string): number | undefined {
  return durationMs(text, { exact: true });
}

/**
 * The wait an upstream asked for, in milliseconds, or undefined.
 *
 * @example
 * ```ts
 * retryAfterMs({ 'retry-after': '30' }, Date.now()); // 30000
 * ```
 */
export function retryAfterMs(headers: Record<string, string>, now: number): number | undefined {
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms);
  const value = headers['retry-after'];
  if (value !== undefined) {
    const trimmed = value.trim();
    if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
    const date = Date.parse(trimmed);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const reset = headers['x-ratelimit-reset-requests'] ?? headers['x-ratelimit-reset-tokens'];
  return reset === undefined ? undefined : parseGoDuration(reset);
}
