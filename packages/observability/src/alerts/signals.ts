/**
 * @module signals
 * The catalogue of signals an alert condition may name, with the kind of
 * value each one has (which decides what it can be compared with) and
 * whether it exists for the whole gateway, per provider, or both.
 */

/** What a signal's value is, which decides what it may be compared with. */
export type SignalKind = 'ratio' | 'count' | 'rate' | 'seconds' | 'health' | 'gauge';

/** Where a signal has a value: the whole service, each provider, or both. */
export type SignalScope = 'global' | 'provider' | 'both';

/** One entry of the catalogue. */
export interface SignalSpec {
  kind: SignalKind;
  scope: SignalScope;
  /** True when the value is computed over a trailing window (`error_rate[5m]`). */
  windowed: boolean;
  description: string;
}

/** A signal as a condition names it, resolved against the catalogue. */
export interface SignalRef {
  /** The name as written, without the window (`p95_latency`). */
  name: string;
  kind: SignalKind;
  scope: SignalScope;
  /** Trailing window in ms, for windowed signals. */
  windowMs: number | null;
  /** For `pNN_latency` and `pNN_ttfb`: the quantile in (0, 1). */
  quantile?: number;
}

/** Window of windowed signals when a condition does not write one. */
export const DEFAULT_SIGNAL_WINDOW_MS = 60_000;

/** Every fixed-name signal. `pNN_latency` and `pNN_ttfb` (any percentile) come on top. */
export const SIGNALS: Readonly<Record<string, SignalSpec>> = {
  error_rate: { kind: 'ratio', scope: 'both', windowed: true, description: 'failed requests ÷ requests over the window' },
  request_count: { kind: 'count', scope: 'both', windowed: true, description: 'requests that ended in the window' },
  error_count: { kind: 'count', scope: 'both', windowed: true, description: 'failed requests in the window' },
  request_rate: { kind: 'rate', scope: 'both', windowed: true, description: 'requests per second over the window' },
  rate_limit_count: {
    kind: 'count',
    scope: 'both',
    windowed: true,
    description: 'upstream attempts answered 429 or rate_limit in the window',
  },
  avg_latency: { kind: 'seconds', scope: 'both', windowed: true, description: 'mean request latency over the window' },
  health_check_failures: { kind: 'count', scope: 'both', windowed: true, description: 'failed health checks in the window' },
  provider_health: { kind: 'health', scope: 'provider', windowed: false, description: 'the provider health monitor verdict' },
  active_cooldowns: {
    kind: 'gauge',
    scope: 'both',
    windowed: false,
    description: 'cooldowns in force (per provider: keys equal to the provider or starting with `provider/` or `provider:`)',
  },
  in_flight: { kind: 'gauge', scope: 'global', windowed: false, description: 'requests started and not yet ended' },
  quota_remaining: {
    kind: 'gauge',
    scope: 'provider',
    windowed: false,
    description: "the lowest remaining quota among the provider's limited credentials",
  },
  gate_failures: { kind: 'count', scope: 'global', windowed: true, description: 'workflow governance gate failures in the window' },
  failed_agent_jobs: { kind: 'count', scope: 'global', windowed: true, description: 'workflow agent jobs that ended Failed in the window' },
  failed_subcommands: { kind: 'count', scope: 'global', windowed: true, description: 'workflow subcommands that exited non-zero in the window' },
};

const PERCENTILE = /^p(\d{1,2}(?:\.\d+)?)_(latency|ttfb)$/;

/**
 * Looks a signal name up; `pNN_latency` / `pNN_ttfb` accept any percentile
 * in (0, 100). Returns `undefined` for unknown names.
 *
 * @example
 * ```ts
 * lookupSignal('p95_latency'); // { kind: 'seconds', quantile: 0.95, ... }
 * ```
 */
export function lookupSignal(name: string): (SignalSpec & { quantile?: number }) | undefined {
  const fixed = SIGNALS[name];
  if (fixed) return fixed;
  const match = PERCENTILE.exec(name);
  if (!match) return undefined;
  const percentile = Number(match[1]);
  if (!(percentile > 0 && percentile < 100)) return undefined;
  const what = match[2] === 'latency' ? 'request latency' : 'time to first byte';
  return { kind: 'seconds', scope: 'both', windowed: true, quantile: percentile / 100, description: `p${percentile} ${what}` };
}

/** Every signal name, for error messages and docs. */
export function signalNames(): string[] {
  return [...Object.keys(SIGNALS), 'pNN_latency', 'pNN_ttfb'];
}
