/**
 * @module selector
 * Picks one candidate (a provider, or a credential of a provider) by a
 * strategy. Built for the request path: a pick is O(1) for `round_robin`
 * and `priority` and O(log n) for the strategies that rank by a changing key,
 * because availability and statistics are applied to the strategy's index
 * when they change, not re-scanned on every pick.
 *
 * The rules, as the gateway documents them:
 * 1. Unavailable candidates (cooling down, unhealthy, disabled, exhausted) are
 *    removed before a strategy runs.
 * 2. If nothing is left and at least one candidate is cooling down, selection
 *    fails with `AllProvidersInCooldown`, carrying the earliest return time.
 * 3. `round_robin` keeps one counter: index = counter mod candidates, then
 *    the counter increments.
 * 4. `quota_aware` picks the highest remaining quota, and fails with
 *    `NoProviderAvailable` when no candidate has quota above 0.
 * 5. `latency` picks the lowest average latency over the window (5 minutes).
 * 6. `cost` picks the lowest average price per 1,000 tokens; candidates
 *    without a price come after every priced one (an unknown price is not 0).
 * 7. An empty candidate list fails with `NoProviderAvailable`.
 * Ties go to the candidate picked least recently, so equals share the load.
 */
import { type Clock, systemClock } from '@switchyard/runtime';
import { AllProvidersInCooldown, NoProviderAvailable, RoutingError } from '../errors.js';
import { IndexedHeap } from './indexedHeap.js';

/** Every selection strategy. */
export const STRATEGIES = ['round_robin', 'quota_aware', 'latency', 'cost', 'priority', 'weighted', 'least_busy'] as const;

/** A selection strategy name, as written in the config. */
export type StrategyName = (typeof STRATEGIES)[number];

/** A candidate and its static properties. */
export interface CandidateSpec {
  id: string;
  /** Lower is preferred by `priority`, and breaks `cost` ties. Default 0. */
  priority?: number;
  /** Relative share of traffic under `weighted`. Default 1; must be > 0. */
  weight?: number;
  /** Prices per 1,000 tokens, for `cost`. A candidate without prices ranks after every priced one (never as free). */
  costPer1k?: { input: number; output: number };
}

/**
 * Why a candidate is out of the running. A candidate can be held out for
 * several reasons at once (cooling down and exhausted, say); it returns when
 * every reason is cleared.
 */
export type UnavailableReason = 'cooldown' | 'unhealthy' | 'disabled' | 'exhausted';

/** In order of display: the first reason held is the one `status()` names. */
const REASONS: readonly UnavailableReason[] = ['cooldown', 'unhealthy', 'disabled', 'exhausted'];
const COOLDOWN_BIT = 1;
const bitOf = (reason: UnavailableReason): number => {
  const index = REASONS.indexOf(reason);
  if (index < 0)
    throw new RoutingError(
      'invalid_argument',
      `unknown unavailable reason ${JSON.stringify(reason)}; expected one of ${REASONS.join(', ')}`,
    );
  return 1 << index;
};

/** Options of {@link Selector}. */
export interface SelectorOptions {
  /** Default `round_robin`. */
  strategy?: StrategyName;
  clock?: Clock;
  /** Window of the `latency` average (default 5 minutes). */
  latencyWindowMs?: number;
}

/** Options of one pick. */
export interface SelectOptions {
  /** Candidates not to pick this time (already tried by this request). */
  exclude?: ReadonlySet<string>;
}

/** One candidate in a status snapshot. */
export interface CandidateStatus {
  id: string;
  available: boolean;
  /** The first reason held, in the order cooldown, unhealthy, disabled, exhausted. */
  unavailable_reason: UnavailableReason | null;
  /** Every reason held. */
  unavailable_reasons: UnavailableReason[];
  /** When a cooling candidate returns (ISO 8601), if known. */
  available_at: string | null;
  priority: number;
  weight: number;
  in_flight: number;
  /** `null` when unlimited. */
  remaining_quota: number | null;
  /** `null` before the first sample in the window. */
  average_latency_ms: number | null;
  /** Mean of the input and output prices per 1,000 tokens; `null` when not priced. */
  average_cost_per_1k: number | null;
  picks: number;
}

/** A snapshot of the selector for the operations API. */
export interface LoadBalancingStatus {
  strategy: StrategyName;
  counter: number;
  candidates: CandidateStatus[];
  last_decision: { id: string; strategy: StrategyName; at: string; candidates_considered: number } | null;
}

const LATENCY_BUCKETS = 10;
const NO_REASON = 0;

/**
 * Chooses among candidates by strategy.
 *
 * @example
 * ```ts
 * const selector = new Selector([{ id: 'openai' }, { id: 'backup', priority: 1 }], { strategy: 'priority' });
 * const provider = selector.select();        // 'openai'
 * selector.markUnavailable('openai', 'cooldown', Date.now() + 60_000);
 * selector.select();                         // 'backup'
 * ```
 */
export class Selector {
  private readonly clock: Clock;
  private readonly latencyBucketMs: number;
  private current: StrategyName;

  // Candidate state, indexed by slot.
  private ids: string[] = [];
  private slotOf = new Map<string, number>();
  private priority = new Float64Array(0);
  private weight = new Float64Array(0);
  private cost = new Float64Array(0);
  private priced = new Uint8Array(0);
  private remaining = new Float64Array(0);
  private inFlight = new Int32Array(0);
  private lastPick = new Float64Array(0);
  private picks = new Float64Array(0);
  private pass = new Float64Array(0);
  /** Bit set of the reasons a slot is held out for (bit i = REASONS[i]); 0 = available. */
  private reason = new Uint8Array(0);
  private until = new Float64Array(0);
  private latSum = new Float64Array(0);
  private latCount = new Float64Array(0);
  private latBucket = new Float64Array(0);
  private latAvg = new Float64Array(0);
  private latSamples = new Uint8Array(0);

  // Strategy indexes.
  private counter = 0;
  private sequence = 0;
  private eligible: number[] = [];
  /** `priority`: end index (exclusive) in `eligible` of each priority level, best first. */
  private groupEnds: number[] = [];
  private eligibleDirty = true;
  private heap: IndexedHeap | undefined;
  private latencyRefreshAt = 0;
  private lastDecision = -1;
  private lastDecisionAt = 0;
  private lastConsidered = 0;

  constructor(candidates: readonly CandidateSpec[] = [], options: SelectorOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.latencyBucketMs = (options.latencyWindowMs ?? 5 * 60_000) / LATENCY_BUCKETS;
    this.current = options.strategy ?? 'round_robin';
    assertStrategy(this.current);
    this.setCandidates(candidates);
  }

  /** The strategy in use. */
  get strategy(): StrategyName {
    return this.current;
  }

  /** Candidate ids, in configuration order. */
  get candidateIds(): readonly string[] {
    return this.ids;
  }

  /** Switches strategy; statistics are kept. */
  setStrategy(strategy: StrategyName): void {
    assertStrategy(strategy);
    if (strategy === this.current) return;
    this.current = strategy;
    this.rebuildIndex();
  }

  /**
   * Replaces the candidate list (a config reload). Statistics, availability
   * and in-flight counts of candidates that stay are kept.
   */
  setCandidates(candidates: readonly CandidateSpec[]): void {
    const seen = new Set<string>();
    for (const c of candidates) {
      if (typeof c.id !== 'string' || c.id.length === 0) throw new RoutingError('invalid_argument', 'a candidate needs a non-empty id');
      if (seen.has(c.id)) throw new RoutingError('invalid_argument', `candidate ${JSON.stringify(c.id)} is listed twice`);
      if (c.weight !== undefined && !(c.weight > 0)) throw new RoutingError('invalid_argument', `candidate ${c.id}: weight must be > 0`);
      seen.add(c.id);
    }
    const old = { slotOf: this.slotOf, ...this.snapshotArrays() };
    const n = candidates.length;
    this.ids = candidates.map((c) => c.id);
    this.slotOf = new Map(this.ids.map((id, slot) => [id, slot]));
    this.priority = new Float64Array(n);
    this.weight = new Float64Array(n);
    this.cost = new Float64Array(n);
    this.priced = new Uint8Array(n);
    this.remaining = new Float64Array(n).fill(Number.POSITIVE_INFINITY);
    this.inFlight = new Int32Array(n);
    this.lastPick = new Float64Array(n);
    this.picks = new Float64Array(n);
    this.pass = new Float64Array(n);
    this.reason = new Uint8Array(n);
    this.until = new Float64Array(n).fill(Number.NaN);
    this.latSum = new Float64Array(n * LATENCY_BUCKETS);
    this.latCount = new Float64Array(n * LATENCY_BUCKETS);
    this.latBucket = new Float64Array(n * LATENCY_BUCKETS).fill(-1);
    this.latAvg = new Float64Array(n);
    this.latSamples = new Uint8Array(n);
    candidates.forEach((c, slot) => {
      this.priority[slot] = c.priority ?? 0;
      this.weight[slot] = c.weight ?? 1;
      if (c.costPer1k) {
        this.cost[slot] = (c.costPer1k.input + c.costPer1k.output) / 2;
        this.priced[slot] = 1;
      } else {
        // An unknown price is not a price of 0: `cost` tries unpriced candidates only after every priced one.
        this.cost[slot] = Number.POSITIVE_INFINITY;
      }
      const before = old.slotOf.get(c.id);
      if (before === undefined) return;
      this.remaining[slot] = old.remaining[before]!;
      this.inFlight[slot] = old.inFlight[before]!;
      this.lastPick[slot] = old.lastPick[before]!;
      this.picks[slot] = old.picks[before]!;
      this.pass[slot] = old.pass[before]!;
      this.reason[slot] = old.reason[before]!;
      this.until[slot] = old.until[before]!;
      this.latAvg[slot] = old.latAvg[before]!;
      this.latSamples[slot] = old.latSamples[before]!;
      for (let b = 0; b < LATENCY_BUCKETS; b++) {
        this.latSum[slot * LATENCY_BUCKETS + b] = old.latSum[before * LATENCY_BUCKETS + b]!;
        this.latCount[slot * LATENCY_BUCKETS + b] = old.latCount[before * LATENCY_BUCKETS + b]!;
        this.latBucket[slot * LATENCY_BUCKETS + b] = old.latBucket[before * LATENCY_BUCKETS + b]!;
      }
    });
    this.lastDecision = -1;
    this.rebuildIndex();
  }

  /**
   * Takes a candidate out of the running for `reason`; `until` (epoch ms) is
   * when a cooldown ends. Holding a candidate out for a second reason keeps
   * the first: it returns only when both are cleared.
   */
  markUnavailable(id: string, reason: UnavailableReason, until?: number): void {
    const slot = this.slot(id);
    const bit = bitOf(reason);
    const wasAvailable = this.reason[slot] === NO_REASON;
    this.reason[slot]! |= bit;
    if (bit === COOLDOWN_BIT || until !== undefined) this.until[slot] = until ?? Number.NaN;
    if (wasAvailable) {
      this.eligibleDirty = true;
      this.heap?.remove(slot);
    }
  }

  /**
   * Clears `reason` (or, without one, every reason) for a candidate. It is
   * back in the running once no reason is left.
   */
  markAvailable(id: string, reason?: UnavailableReason): void {
    const slot = this.slot(id);
    if (this.reason[slot] === NO_REASON) return;
    const bit = reason === undefined ? 0xff : bitOf(reason);
    this.reason[slot]! &= ~bit;
    if (bit & COOLDOWN_BIT) this.until[slot] = Number.NaN;
    if (this.reason[slot] !== NO_REASON) return;
    this.eligibleDirty = true;
    if (this.heap) {
      // A returning candidate joins `weighted` at the current pass, so it does not burst to catch up.
      if (this.current === 'weighted') this.pass[slot] = this.heap.size > 0 ? this.pass[this.heap.peek()]! : 0;
      this.heap.insert(slot);
    }
  }

  /** Whether a candidate is in the running. */
  isAvailable(id: string): boolean {
    return this.reason[this.slot(id)] === NO_REASON;
  }

  /** Whether `id` is a candidate. */
  has(id: string): boolean {
    return this.slotOf.has(id);
  }

  /** The reasons a candidate is held out for (empty when available). */
  unavailableReasons(id: string): UnavailableReason[] {
    return reasonsOf(this.reason[this.slot(id)]!);
  }

  /** Sets a candidate's remaining quota; `undefined` means unlimited. */
  setRemainingQuota(id: string, remaining: number | undefined): void {
    const slot = this.slot(id);
    this.remaining[slot] = remaining ?? Number.POSITIVE_INFINITY;
    if (this.current === 'quota_aware') this.heap?.update(slot);
  }

  /** Records the latency of one completed request. */
  recordLatency(id: string, latencyMs: number): void {
    if (!Number.isFinite(latencyMs) || latencyMs < 0) return;
    const slot = this.slot(id);
    const bucket = Math.floor(this.clock.now() / this.latencyBucketMs);
    const index = slot * LATENCY_BUCKETS + (bucket % LATENCY_BUCKETS);
    if (this.latBucket[index] !== bucket) {
      this.latBucket[index] = bucket;
      this.latSum[index] = 0;
      this.latCount[index] = 0;
    }
    this.latSum[index]! += latencyMs;
    this.latCount[index]! += 1;
    this.recomputeLatency(slot, bucket);
    if (this.current === 'latency') this.heap?.update(slot);
  }

  /** Counts a request as started on `id` (for `least_busy`). Pair with {@link end}. */
  begin(id: string): void {
    const slot = this.slot(id);
    this.inFlight[slot]! += 1;
    if (this.current === 'least_busy') this.heap?.update(slot);
  }

  /** Counts a request on `id` as finished. */
  end(id: string): void {
    const slot = this.slot(id);
    if (this.inFlight[slot]! > 0) this.inFlight[slot]! -= 1;
    if (this.current === 'least_busy') this.heap?.update(slot);
  }

  /**
   * Picks a candidate.
   *
   * @throws {AllProvidersInCooldown} when every candidate left is cooling down.
   * @throws {NoProviderAvailable} when there is no candidate, none is usable,
   * or (`quota_aware`) none has quota left.
   */
  select(options?: SelectOptions): string {
    const exclude = options?.exclude;
    const slot = this.isHeapStrategy() ? this.pickFromHeap(exclude) : this.pickFromList(exclude);
    this.lastDecision = slot;
    this.lastDecisionAt = this.clock.now();
    this.picks[slot]! += 1;
    return this.ids[slot]!;
  }

  /** A snapshot for the operations API. */
  status(): LoadBalancingStatus {
    const now = this.clock.now();
    const bucket = Math.floor(now / this.latencyBucketMs);
    return {
      strategy: this.current,
      counter: this.counter,
      candidates: this.ids.map((id, slot) => {
        this.recomputeLatency(slot, bucket);
        const reasons = reasonsOf(this.reason[slot]!);
        const until = this.until[slot]!;
        return {
          id,
          available: reasons.length === 0,
          unavailable_reason: reasons[0] ?? null,
          unavailable_reasons: reasons,
          available_at: Number.isNaN(until) ? null : new Date(until).toISOString(),
          priority: this.priority[slot]!,
          weight: this.weight[slot]!,
          in_flight: this.inFlight[slot]!,
          remaining_quota: Number.isFinite(this.remaining[slot]!) ? this.remaining[slot]! : null,
          average_latency_ms: this.latSamples[slot] ? this.latAvg[slot]! : null,
          average_cost_per_1k: this.priced[slot] ? this.cost[slot]! : null,
          picks: this.picks[slot]!,
        };
      }),
      last_decision:
        this.lastDecision < 0
          ? null
          : {
              id: this.ids[this.lastDecision]!,
              strategy: this.current,
              at: new Date(this.lastDecisionAt).toISOString(),
              candidates_considered: this.lastConsidered,
            },
    };
  }

  // ---- strategies ------------------------------------------------------

  private isHeapStrategy(): boolean {
    return this.current !== 'round_robin' && this.current !== 'priority';
  }

  /** `round_robin` and `priority`: a list of available slots and one counter. */
  private pickFromList(exclude: ReadonlySet<string> | undefined): number {
    if (this.eligibleDirty) this.rebuildEligible();
    const list = this.eligible;
    if (this.current === 'round_robin') {
      const slot = this.roundRobinIn(list, 0, list.length, exclude);
      return slot >= 0 ? slot : this.failEmpty(exclude);
    }
    // `priority`: the list is sorted by priority; serve the best group that has a candidate
    // not excluded, round robin within it.
    let groupStart = 0;
    for (const groupEnd of this.groupEnds) {
      const slot = this.roundRobinIn(list, groupStart, groupEnd - groupStart, exclude);
      if (slot >= 0) return slot;
      groupStart = groupEnd;
    }
    return this.failEmpty(exclude);
  }

  /** Rule 3: index = counter mod length, then the counter increments. Skips excluded slots. */
  private roundRobinIn(list: readonly number[], start: number, length: number, exclude: ReadonlySet<string> | undefined): number {
    this.lastConsidered = length;
    for (let tries = 0; tries < length; tries++) {
      const slot = list[start + (this.counter % length)]!;
      this.counter++;
      if (!exclude?.has(this.ids[slot]!)) return slot;
    }
    return -1;
  }

  /** The ranked strategies: the heap's top, after expiry of stale latency samples. */
  private pickFromHeap(exclude: ReadonlySet<string> | undefined): number {
    const heap = this.heap!;
    if (this.current === 'latency' && this.clock.now() >= this.latencyRefreshAt) this.refreshLatencies();
    let slot = heap.peek();
    if (slot >= 0 && exclude?.has(this.ids[slot]!)) slot = this.bestExcluding(exclude);
    if (slot < 0) return this.failEmpty(exclude);
    if (this.current === 'quota_aware' && !(this.remaining[slot]! > 0)) {
      throw new NoProviderAvailable('no candidate has quota left');
    }
    this.lastConsidered = heap.size;
    this.lastPick[slot] = ++this.sequence;
    if (this.current === 'weighted') this.pass[slot]! += 1 / this.weight[slot]!;
    heap.update(slot);
    return slot;
  }

  /** Linear scan for the best slot not excluded: only on retries, which are rare. */
  private bestExcluding(exclude: ReadonlySet<string>): number {
    const less = this.comparator();
    let best = -1;
    for (const slot of this.heap!.slots()) {
      if (exclude.has(this.ids[slot]!)) continue;
      if (best < 0 || less(slot, best)) best = slot;
    }
    return best;
  }

  private failEmpty(exclude: ReadonlySet<string> | undefined): never {
    if (this.ids.length === 0) throw new NoProviderAvailable('no candidates are configured');
    let earliest = Number.POSITIVE_INFINITY;
    let cooling = 0;
    for (let slot = 0; slot < this.ids.length; slot++) {
      if (!(this.reason[slot]! & COOLDOWN_BIT)) continue;
      cooling++;
      const until = this.until[slot]!;
      if (!Number.isNaN(until) && until < earliest) earliest = until;
    }
    const usable = this.ids.length - this.countUnavailable();
    if (cooling > 0 && usable === 0) {
      throw new AllProvidersInCooldown(Number.isFinite(earliest) ? earliest : this.clock.now());
    }
    if (usable > 0 && exclude) throw new NoProviderAvailable('every available candidate was already tried');
    throw new NoProviderAvailable(`no candidate is available (${this.describeUnavailable()})`);
  }

  private countUnavailable(): number {
    let count = 0;
    for (let slot = 0; slot < this.ids.length; slot++) if (this.reason[slot] !== NO_REASON) count++;
    return count;
  }

  private describeUnavailable(): string {
    const counts = new Map<string, number>();
    for (let slot = 0; slot < this.ids.length; slot++) {
      for (const reason of reasonsOf(this.reason[slot]!)) counts.set(reason, (counts.get(reason) ?? 0) + 1);
    }
    return [...counts].map(([reason, count]) => `${count} ${reason}`).join(', ');
  }

  private comparator(): (a: number, b: number) => boolean {
    const { lastPick } = this;
    switch (this.current) {
      case 'quota_aware': {
        const remaining = this.remaining;
        return (a, b) => remaining[a]! > remaining[b]! || (remaining[a] === remaining[b] && lastPick[a]! < lastPick[b]!);
      }
      case 'latency': {
        const avg = this.latAvg;
        return (a, b) => avg[a]! < avg[b]! || (avg[a] === avg[b] && lastPick[a]! < lastPick[b]!);
      }
      case 'cost': {
        const { cost, priority } = this;
        return (a, b) =>
          cost[a]! < cost[b]! ||
          (cost[a] === cost[b] && (priority[a]! < priority[b]! || (priority[a] === priority[b] && lastPick[a]! < lastPick[b]!)));
      }
      case 'least_busy': {
        const inFlight = this.inFlight;
        return (a, b) => inFlight[a]! < inFlight[b]! || (inFlight[a] === inFlight[b] && lastPick[a]! < lastPick[b]!);
      }
      case 'weighted': {
        const pass = this.pass;
        return (a, b) => pass[a]! < pass[b]! || (pass[a] === pass[b] && a < b);
      }
      default:
        return (a, b) => a < b;
    }
  }

  private rebuildIndex(): void {
    this.eligibleDirty = true;
    this.heap = undefined;
    if (!this.isHeapStrategy()) return;
    if (this.current === 'weighted') this.pass.fill(0);
    if (this.current === 'latency') this.refreshLatencies();
    this.heap = new IndexedHeap(this.comparator());
    for (let slot = 0; slot < this.ids.length; slot++) if (this.reason[slot] === NO_REASON) this.heap.insert(slot);
  }

  private rebuildEligible(): void {
    const list: number[] = [];
    for (let slot = 0; slot < this.ids.length; slot++) if (this.reason[slot] === NO_REASON) list.push(slot);
    const ends: number[] = [];
    if (this.current === 'priority') {
      list.sort((a, b) => this.priority[a]! - this.priority[b]! || a - b);
      for (let i = 1; i <= list.length; i++) {
        if (i === list.length || this.priority[list[i]!] !== this.priority[list[i - 1]!]) ends.push(i);
      }
    }
    this.eligible = list;
    this.groupEnds = ends;
    this.eligibleDirty = false;
  }

  private recomputeLatency(slot: number, currentBucket: number): void {
    let sum = 0;
    let count = 0;
    for (let b = 0; b < LATENCY_BUCKETS; b++) {
      const index = slot * LATENCY_BUCKETS + b;
      if (this.latBucket[index]! > currentBucket - LATENCY_BUCKETS) {
        sum += this.latSum[index]!;
        count += this.latCount[index]!;
      }
    }
    // No samples in the window reads as 0: an unmeasured candidate gets tried, and so measured.
    this.latAvg[slot] = count > 0 ? sum / count : 0;
    this.latSamples[slot] = count > 0 ? 1 : 0;
  }

  /** Ages the latency windows of every candidate; runs once per bucket (a tenth of the window). */
  private refreshLatencies(): void {
    const now = this.clock.now();
    const bucket = Math.floor(now / this.latencyBucketMs);
    for (let slot = 0; slot < this.ids.length; slot++) this.recomputeLatency(slot, bucket);
    this.latencyRefreshAt = (bucket + 1) * this.latencyBucketMs;
    if (this.heap) {
      // Many keys moved at once: rebuild rather than sift each.
      const slots = [...this.heap.slots()];
      this.heap.clear();
      for (const slot of slots) this.heap.insert(slot);
    }
  }

  private slot(id: string): number {
    const slot = this.slotOf.get(id);
    if (slot === undefined) throw new RoutingError('invalid_argument', `unknown candidate ${JSON.stringify(id)}`);
    return slot;
  }

  private snapshotArrays() {
    return {
      remaining: this.remaining,
      inFlight: this.inFlight,
      lastPick: this.lastPick,
      picks: this.picks,
      pass: this.pass,
      reason: this.reason,
      until: this.until,
      latSum: this.latSum,
      latCount: this.latCount,
      latBucket: this.latBucket,
      latAvg: this.latAvg,
      latSamples: this.latSamples,
    };
  }
}

function reasonsOf(bits: number): UnavailableReason[] {
  if (bits === NO_REASON) return [];
  return REASONS.filter((_, index) => bits & (1 << index));
}

function assertStrategy(strategy: string): asserts strategy is StrategyName {
  if (!(STRATEGIES as readonly string[]).includes(strategy)) {
    throw new RoutingError('invalid_config', `unknown strategy ${JSON.stringify(strategy)}; expected one of ${STRATEGIES.join(', ')}`);
  }
}
