/**
 * @module slidingWindows
 * Bounded statistics for the provider status record: request counts, error
 * counts and latency over the last minute in sixty one-second buckets, and
 * time-weighted uptime over the last day in hourly buckets. Recording is
 * O(1) and memory is fixed per provider, however long the process runs.
 */

const SECOND = 1000;
const MINUTE_BUCKETS = 60;

/** Fields of one bucket, interleaved so that recording touches one or two cache lines. */
const STAMP = 0;
const REQUESTS = 1;
const ERRORS = 2;
const LATENCY_SUM = 3;
const LATENCY_COUNT = 4;
const FIELDS = 5;

/** Requests, errors and latency over the last 60 seconds. */
export class RequestWindow {
  private readonly buckets = new Float64Array(MINUTE_BUCKETS * FIELDS);

  constructor() {
    for (let i = 0; i < MINUTE_BUCKETS; i++) this.buckets[i * FIELDS + STAMP] = -1;
  }

  /** O(1). A non-finite or negative latency counts the request but not its latency. */
  record(now: number, ok: boolean, latencyMs: number): void {
    const second = Math.floor(now / SECOND);
    const at = (second % MINUTE_BUCKETS) * FIELDS;
    const b = this.buckets;
    if (b[at + STAMP] !== second) {
      b[at + STAMP] = second;
      b[at + REQUESTS] = 0;
      b[at + ERRORS] = 0;
      b[at + LATENCY_SUM] = 0;
      b[at + LATENCY_COUNT] = 0;
    }
    b[at + REQUESTS]! += 1;
    if (!ok) b[at + ERRORS]! += 1;
    if (latencyMs >= 0 && latencyMs < Number.POSITIVE_INFINITY) {
      b[at + LATENCY_SUM]! += latencyMs;
      b[at + LATENCY_COUNT]! += 1;
    }
  }

  /** Totals over the 60 one-second buckets ending with the current one. */
  totals(now: number): { requests: number; errors: number; averageLatencyMs: number | null } {
    const second = Math.floor(now / SECOND);
    const b = this.buckets;
    let requests = 0;
    let errors = 0;
    let latencySum = 0;
    let latencyCount = 0;
    for (let at = 0; at < b.length; at += FIELDS) {
      const stamp = b[at + STAMP]!;
      if (stamp > second - MINUTE_BUCKETS && stamp <= second) {
        requests += b[at + REQUESTS]!;
        errors += b[at + ERRORS]!;
        latencySum += b[at + LATENCY_SUM]!;
        latencyCount += b[at + LATENCY_COUNT]!;
      }
    }
    return { requests, errors, averageLatencyMs: latencyCount > 0 ? latencySum / latencyCount : null };
  }
}

const HOUR = 3_600_000;
/** 24 hours plus the current, partial one. */
const DAY_BUCKETS = 25;

/**
 * The share of time a provider was healthy over the last 24 hours (or since
 * it was first watched, if later). Status changes and reads fold the time
 * since the last one into hourly buckets; the oldest bucket, which the
 * window only partly covers, counts in proportion (exact when the status
 * did not change within that hour).
 */
export class UptimeTracker {
  private readonly stamp = new Float64Array(DAY_BUCKETS).fill(-1);
  private readonly healthyMs = new Float64Array(DAY_BUCKETS);
  private readonly observedMs = new Float64Array(DAY_BUCKETS);
  private since: number;
  private healthy: boolean;

  constructor(now: number, healthy: boolean) {
    this.since = now;
    this.healthy = healthy;
  }

  /** Records a change of status at `now`. */
  set(now: number, healthy: boolean): void {
    this.fold(now);
    this.healthy = healthy;
  }

  /** Percent of the last 24 hours spent healthy, to two decimals; 100 when nothing was observed yet. */
  percent(now: number): number {
    this.fold(now);
    const hour = Math.floor(now / HOUR);
    const oldest = hour - (DAY_BUCKETS - 1);
    const oldestShare = 1 - (now - hour * HOUR) / HOUR;
    let healthy = 0;
    let observed = 0;
    for (let i = 0; i < DAY_BUCKETS; i++) {
      const stamp = this.stamp[i]!;
      if (stamp < oldest || stamp > hour) continue;
      const share = stamp === oldest ? oldestShare : 1;
      healthy += this.healthyMs[i]! * share;
      observed += this.observedMs[i]! * share;
    }
    return observed > 0 ? Math.round((healthy / observed) * 10_000) / 100 : 100;
  }

  /** Adds the time from `since` to `now` to the buckets it spans (at most the last 24 hours of it). */
  private fold(now: number): void {
    let from = Math.max(this.since, now - DAY_BUCKETS * HOUR);
    this.since = Math.max(this.since, now);
    while (from < now) {
      const hour = Math.floor(from / HOUR);
      const to = Math.min(now, (hour + 1) * HOUR);
      const index = hour % DAY_BUCKETS;
      if (this.stamp[index] !== hour) {
        this.stamp[index] = hour;
        this.healthyMs[index] = 0;
        this.observedMs[index] = 0;
      }
      this.observedMs[index]! += to - from;
      if (this.healthy) this.healthyMs[index]! += to - from;
      from = to;
    }
  }
}
