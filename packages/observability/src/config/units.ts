/**
 * @module units
 * Durations (`100ms`, `30s`, `5m`, `1h30m`, `30d`) and sizes (`100M`,
 * `512KiB`, `1G`) as the config writes them. Sizes are binary: `M` is
 * 1024 × 1024 bytes, as log rotators count.
 */
import { durationMs } from '@switchyard/runtime';
import { ObservabilityError } from '../errors.js';

/**
 * Parses a duration into milliseconds, through the runtime's {@link durationMs}.
 * A bare number is milliseconds.
 *
 * @example
 * ```ts
 * parseDuration('1h30m'); // 5_400_000
 * parseDuration('250ms'); // 250
 * ```
 */
export function parseDuration(input: string | number): number {
  const ms = durationMs(input);
  if (ms !== undefined) return ms;
  if (typeof input === 'number') {
    throw new ObservabilityError('invalid_argument', `a duration must be a non-negative number of milliseconds, got ${input}`);
  }
  throw new ObservabilityError(
    'invalid_argument',
    `${JSON.stringify(input)} is not a duration (write it like 100ms, 30s, 5m, 1h30m or 30d)`,
  );
}

/**
 * Formats milliseconds compactly (`300000` → `5m`), for messages.
 *
 * @example
 * ```ts
 * formatDuration(90_000); // '1m30s'
 * ```
 */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000 || ms % 1000 !== 0) return `${ms}ms`;
  const parts: string[] = [];
  let rest = ms / 1000;
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join('');
}

const SIZE_UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/**
 * Parses a size into bytes. `K`, `M`, `G`, `T` (with an optional `B` or
 * `iB`) are powers of 1024; a bare number is bytes.
 *
 * @example
 * ```ts
 * parseSize('100M'); // 104_857_600
 * ```
 */
export function parseSize(input: string | number): number {
  if (typeof input === 'number') {
    if (Number.isInteger(input) && input >= 0) return input;
    throw new ObservabilityError('invalid_argument', `a size must be a non-negative whole number of bytes, got ${input}`);
  }
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(input) ?? /^\s*(\d+)\s*(b)\s*$/i.exec(input);
  if (!match) {
    throw new ObservabilityError('invalid_argument', `${JSON.stringify(input)} is not a size (write it like 512K, 100M or 1G)`);
  }
  return Math.round(Number(match[1]) * SIZE_UNITS[match[2]!.toLowerCase()]!);
}
