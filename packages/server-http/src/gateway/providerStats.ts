/**
 * @module providerStats
 * Live per-provider traffic for `GET /v1/metrics/providers` and the
 * dashboard's charts: totals since start, and per-second series of the last
 * five minutes (requests, errors, mean latency), fed by the relay's events.
 * Memory is fixed: 300 one-second buckets per provider.
 */

import type { DecisionEvent, RequestEndEvent } from '@switchyard/core-routing';
import type { Clock } from '@switchyard/runtime';

const SECONDS = 300;

interface Series {
  /** Start second (epoch seconds) of each bucket; a bucket older than the window is stale. */
  second: Float64Array;
  requests: Uint32Array;
  errors: Uint32Array;
  latencySum: Float64Array;
}

interface ProviderCounters {
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  series: Series;
}

/** One provider's live figures. */
export interface ProviderStats {
  requests_total: number;
  errors_total: number;
  tokens: { input: number; output: number };
  requests_last_minute: number;
  errors_last_minute: number;
  average_latency_ms_last_minute: number | null;
  /** Per second, oldest first, covering the last `window_seconds`. */
  series: { requests: number[]; errors: number[]; latency_ms: (number | null)[] };
}

/** What `GET /v1/metrics/providers` answers. */
export interface ProviderStatsReport {
  window_seconds: number;
  /** Epoch seconds of the last point of every series. */
  until: number;
  providers: Record<string, ProviderStats>;
  recent_decisions: { request_id: string; model: string; provider: string; strategy: string; candidates: string[]; at: string }[];
}

function newSeries(): Series {
  return {
    second: new Float64Array(SECONDS).fill(-1),
    requests: new Uint32Array(SECONDS),
    errors: new Uint32Array(SECONDS),
    latencySum: new Float64Array(SECONDS),
  };
}

/** A decision as `recent_decisions` shows it. */
function formatDecision(event: DecisionEvent): ProviderStatsReport['recent_decisions'][number] {
  return {
    request_id: event.requestId,
    model: event.model,
    provider: event.provider,
    strategy: event.strategy,
    candidates: [...event.candidates],
    at: new Date(event.at).toISOString(),
  };
}

/**
 * Aggregates the relay's `request:end` and `decision` events.
 *
 * @example
 * ```ts
 * const stats = new ProviderStatsCollector(clock);
 * relay.events.on('request:end', (e) => stats.record(e));
 * ```
 */
export class ProviderStatsCollector {
  private readonly clock: Clock;
  private readonly providers = new Map<string, ProviderCounters>();
  /** The last decisions as the relay emitted them (each event is its own object), formatted only when reported. */
  private readonly decisions: DecisionEvent[] = [];

  constructor(clock: Clock) {
    this.clock = clock;
  }

  /** Counts one finished request. */
  record(event: RequestEndEvent): void {
    if (!event.provider || event.provider.startsWith('node:')) return;
    let counters = this.providers.get(event.provider);
    if (!counters) {
      counters = { requests: 0, errors: 0, inputTokens: 0, outputTokens: 0, series: newSeries() };
      this.providers.set(event.provider, counters);
    }
    const failed = event.outcome === 'error';
    counters.requests++;
    if (failed) counters.errors++;
    counters.inputTokens += event.tokens.input;
    counters.outputTokens += event.tokens.output;
    const second = Math.floor(event.at / 1000);
    const slot = second % SECONDS;
    const s = counters.series;
    if (s.second[slot] !== second) {
      s.second[slot] = second;
      s.requests[slot] = 0;
      s.errors[slot] = 0;
      s.latencySum[slot] = 0;
    }
    s.requests[slot]! += 1;
    if (failed) s.errors[slot]! += 1;
    s.latencySum[slot]! += event.latencyMs;
  }

  /** Remembers a routing decision (the last 20). */
  recordDecision(event: DecisionEvent): void {
    this.decisions.push(event);
    if (this.decisions.length > 20) this.decisions.shift();
  }

  /** The report, for the providers named (configured ones appear even before their first request). */
  report(providers: readonly string[]): ProviderStatsReport {
    const now = Math.floor(this.clock.now() / 1000);
    const out: Record<string, ProviderStats> = {};
    for (const name of providers) {
      const counters = this.providers.get(name);
      const requests: number[] = [];
      const errors: number[] = [];
      const latency: (number | null)[] = [];
      let minuteRequests = 0;
      let minuteErrors = 0;
      let minuteLatency = 0;
      for (let second = now - SECONDS + 1; second <= now; second++) {
        const slot = ((second % SECONDS) + SECONDS) % SECONDS;
        const s = counters?.series;
        const fresh = s !== undefined && s.second[slot] === second;
        const r = fresh ? s.requests[slot]! : 0;
        const e = fresh ? s.errors[slot]! : 0;
        requests.push(r);
        errors.push(e);
        latency.push(fresh && r > 0 ? Math.round(s.latencySum[slot]! / r) : null);
        if (second > now - 60 && fresh) {
          minuteRequests += r;
          minuteErrors += e;
          minuteLatency += s.latencySum[slot]!;
        }
      }
      out[name] = {
        requests_total: counters?.requests ?? 0,
        errors_total: counters?.errors ?? 0,
        tokens: { input: counters?.inputTokens ?? 0, output: counters?.outputTokens ?? 0 },
        requests_last_minute: minuteRequests,
        errors_last_minute: minuteErrors,
        average_latency_ms_last_minute: minuteRequests > 0 ? Math.round(minuteLatency / minuteRequests) : null,
        series: { requests, errors, latency_ms: latency },
      };
    }
    return { window_seconds: SECONDS, until: now, providers: out, recent_decisions: this.decisions.map(formatDecision).reverse() };
  }
}
