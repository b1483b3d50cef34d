/**
 * @module cooldownSettings
 * The settings of a `CooldownManager`, their documented defaults, and their
 * validation. Detection is global (`server.operations.cooldown.*`);
 * durations are per key (`providers.<p>.cooldown.*`). Validation happens
 * once, when settings are given or reloaded, never on the request path.
 */
import { RoutingError } from '../errors.js';
import { boolean, definedOnly, integerIn, positiveMs } from '../validate.js';

/** How long a key cools down, per key (a provider's `cooldown` block). */
export interface CooldownDurations {
  /** Automatic cooldowns for this key. Default true. Manual cooldowns always work. */
  enabled?: boolean;
  /** Duration of any cooldown without a more specific one. Default 5 minutes. */
  defaultMs?: number;
  /** After `errorThreshold` rate limits (429) in the window. Default `defaultMs`. */
  rateLimitMs?: number;
  /** After `errorThreshold` other errors in the window. Default `defaultMs`. */
  errorMs?: number;
  /**
   * Backoff for keys that keep failing: the n-th automatic cooldown in a row
   * (with no success recorded in between) lasts `multiplier^(n-1)` times as
   * long, up to `maxMs` (default 1 hour). Default: no backoff (multiplier 1).
   */
  backoff?: { multiplier?: number; maxMs?: number };
  /** Upper bound on an upstream's `Retry-After`, so a bad header cannot cool a key for a year. Default 24 hours. */
  maxRetryAfterMs?: number;
}

/** Automatic detection, shared by every key. */
export interface CooldownDetection {
  /** Default true. When false, failures are not counted and start no cooldown. */
  enabled?: boolean;
  /** Sliding window of the failure count. Default 60,000 (1 minute). */
  windowMs?: number;
  /** Failures of one kind within the window that start a cooldown. Default 5. */
  errorThreshold?: number;
}

/** Durations of one key with every default applied. */
export interface ResolvedDurations {
  enabled: boolean;
  rateLimitMs: number;
  errorMs: number;
  backoffMultiplier: number;
  backoffMaxMs: number;
  maxRetryAfterMs: number;
}

/** Detection with every default applied. */
export type ResolvedDetection = Required<CooldownDetection>;

export const DEFAULT_COOLDOWN_MS = 5 * 60_000;
export const DEFAULT_RECOVERY_INTERVAL_MS = 30_000;
export const DEFAULT_HEALTH_CHECK_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RETRY_AFTER_MS = 24 * 60 * 60_000;
const DEFAULT_BACKOFF_MAX_MS = 60 * 60_000;
/** Bounds the memory of one key's failure ring. */
const MAX_ERROR_THRESHOLD = 10_000;

/** Detection settings merged over `current`, checked. */
export function resolveDetection(detection: CooldownDetection | undefined, current?: ResolvedDetection): ResolvedDetection {
  const merged = { enabled: true, windowMs: 60_000, errorThreshold: 5, ...current, ...definedOnly(detection ?? {}) };
  boolean(merged.enabled, 'detection.enabled');
  positiveMs(merged.windowMs, 'detection.windowMs');
  integerIn(merged.errorThreshold, 'detection.errorThreshold', 1, MAX_ERROR_THRESHOLD);
  return merged;
}

/** One key's durations with defaults applied, checked; `where` names the setting in errors. */
export function resolveDurations(durations: CooldownDurations | undefined, where: string): ResolvedDurations {
  const d = durations ?? {};
  if (typeof d !== 'object' || d === null) throw invalid(`${where} must be an object`);
  if (d.enabled !== undefined) boolean(d.enabled, `${where}.enabled`);
  const defaultMs = d.defaultMs === undefined ? DEFAULT_COOLDOWN_MS : positiveMs(d.defaultMs, `${where}.defaultMs`);
  const multiplier = d.backoff?.multiplier ?? 1;
  if (typeof multiplier !== 'number' || !Number.isFinite(multiplier) || multiplier < 1) {
    throw invalid(`${where}.backoff.multiplier must be a number ≥ 1`);
  }
  return {
    enabled: d.enabled ?? true,
    rateLimitMs: d.rateLimitMs === undefined ? defaultMs : positiveMs(d.rateLimitMs, `${where}.rateLimitMs`),
    errorMs: d.errorMs === undefined ? defaultMs : positiveMs(d.errorMs, `${where}.errorMs`),
    backoffMultiplier: multiplier,
    backoffMaxMs: d.backoff?.maxMs === undefined ? DEFAULT_BACKOFF_MAX_MS : positiveMs(d.backoff.maxMs, `${where}.backoff.maxMs`),
    maxRetryAfterMs:
      d.maxRetryAfterMs === undefined ? DEFAULT_MAX_RETRY_AFTER_MS : positiveMs(d.maxRetryAfterMs, `${where}.maxRetryAfterMs`),
  };
}

/**
 * Per-key durations, looked up by the exact key first and then, for keys of
 * the form `<provider>/<credential>`, by the provider: a credential cools
 * down as its provider's settings say unless it has settings of its own.
 */
export class DurationTable {
  private readonly byKey = new Map<string, ResolvedDurations>();
  private readonly fallback: ResolvedDurations;

  constructor(durations: Record<string, CooldownDurations> | undefined, defaults: CooldownDurations | undefined) {
    if (durations !== undefined && (typeof durations !== 'object' || durations === null)) throw invalid('durations must be an object');
    for (const [key, value] of Object.entries(durations ?? {})) {
      this.byKey.set(key, resolveDurations(value, `durations[${JSON.stringify(key)}]`));
    }
    this.fallback = resolveDurations(defaults, 'defaultDurations');
  }

  of(key: string): ResolvedDurations {
    const own = this.byKey.get(key);
    if (own) return own;
    const slash = key.indexOf('/');
    return (slash > 0 && this.byKey.get(key.slice(0, slash))) || this.fallback;
  }
}

function invalid(message: string): RoutingError {
  return new RoutingError('invalid_config', message);
}
