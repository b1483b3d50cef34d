/**
 * @module validate
 * Checks of settings and arguments, shared by every class of the package.
 * Each names the field that failed, so a bad config line is easy to find.
 */
import { RoutingError, type RoutingErrorCode } from './errors.js';

/** Checks a duration in milliseconds (positive and finite) and returns it. */
export function positiveMs(value: unknown, where: string, code: RoutingErrorCode = 'invalid_config'): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new RoutingError(code, `${where} must be a positive, finite number of milliseconds`);
  }
  return value;
}

/** Checks an integer in `[min, max]` and returns it. */
export function integerIn(value: unknown, where: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new RoutingError('invalid_config', `${where} must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** Checks a boolean and returns it. */
export function boolean(value: unknown, where: string): boolean {
  if (typeof value !== 'boolean') throw new RoutingError('invalid_config', `${where} must be a boolean`);
  return value;
}

/** Checks a list of distinct, non-empty names and returns a copy. */
export function nameList(value: unknown, where: string): string[] {
  if (!Array.isArray(value)) throw new RoutingError('invalid_argument', `${where} must be an array of names`);
  const seen = new Set<string>();
  for (const name of value) {
    if (typeof name !== 'string' || name.length === 0) throw new RoutingError('invalid_argument', `${where} must hold non-empty strings`);
    if (seen.has(name)) throw new RoutingError('invalid_argument', `${where} lists ${JSON.stringify(name)} twice`);
    seen.add(name);
  }
  return [...seen];
}

/** Copies `value` without its `undefined` members, so spreading it keeps defaults. */
export function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
