/**
 * @module shared
 * Helpers every command module uses: opening and closing the runtime
 * around an action, and reading numeric and list options with errors that
 * name the option.
 */
import { CliError } from '../errors.js';
import type { CommandContext } from '../program.js';
import { openRuntime, type Runtime } from '../runtime.js';

/** Opens the runtime, runs `fn`, and always closes the runtime; returns the exit code (0 when `fn` returns nothing). */
export async function withRuntime(ctx: CommandContext, fn: (rt: Runtime) => Promise<unknown>): Promise<number> {
  const rt = await openRuntime(ctx.globals, ctx.io);
  try {
    const code = await fn(rt);
    return typeof code === 'number' ? code : 0;
  } finally {
    await rt.close();
  }
}

/** An integer option within bounds. */
export function intOption(value: string | undefined, option: string, bounds: { min?: number; max?: number } = {}): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = bounds;
  if (!/^-?\d+$/.test(value.trim()) || n < min || n > max) {
    const range = bounds.max !== undefined ? ` from ${min} to ${max}` : bounds.min !== undefined ? ` of at least ${min}` : '';
    throw new CliError('invalid_argument', `${option}: expected an integer${range}; got ${JSON.stringify(value)}`, {
      field: option.replace(/^--/, '').replace(/-/g, '_'),
    });
  }
  return n;
}

/** A comma-separated list of positive integers (evidence ids, sequences). */
export function idList(value: string | undefined, option: string): number[] {
  if (value === undefined || value.trim() === '') return [];
  return value.split(',').map((part) => intOption(part.trim(), option, { min: 1 })!);
}

/** A comma-separated list of words. */
export function wordList(value: string | undefined): string[] {
  return value === undefined
    ? []
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
}
