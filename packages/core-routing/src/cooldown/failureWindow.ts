/**
 * @module failureWindow
 * Detects "`threshold` failures within `windowMs`" exactly, in O(1) time per
 * failure and O(threshold) memory per key: a ring holds the times of the
 * last `threshold` failures, and the threshold is reached when the oldest of
 * them is still inside the window. No per-request array grows, and nothing
 * needs a sweep.
 */

/** The last `capacity` failure times of one key, in a ring. */
export class FailureWindow {
  private times: Float64Array;
  /** Index of the next write. */
  private next = 0;
  /** Number of valid times held (≤ capacity). */
  private held = 0;

  constructor(capacity: number) {
    this.times = new Float64Array(capacity);
  }

  get capacity(): number {
    return this.times.length;
  }

  /**
   * Records a failure at `now` and returns true when `capacity` failures
   * (this one included) fall within the last `windowMs` (inclusive of its
   * start: a failure exactly `windowMs` ago still counts).
   */
  record(now: number, windowMs: number): boolean {
    const capacity = this.times.length;
    this.times[this.next] = now;
    this.next = this.next + 1 === capacity ? 0 : this.next + 1;
    if (this.held < capacity) this.held++;
    // When full, `next` points at the oldest of the last `capacity` failures.
    return this.held === capacity && now - this.times[this.next]! <= windowMs;
  }

  /** Failures within the window ending at `now` (O(capacity); for status and tests, not the request path). */
  count(now: number, windowMs: number): number {
    let count = 0;
    for (let i = 0; i < this.held; i++) {
      const time = this.times[i]!;
      if (time <= now && now - time <= windowMs) count++;
    }
    return count;
  }

  /** Forgets every failure (the counter reset when a cooldown starts). */
  reset(): void {
    this.next = 0;
    this.held = 0;
  }

  /**
   * Changes the capacity (a reloaded threshold), keeping the most recent
   * failures that still fit, so a reload does not forget what just happened.
   */
  resize(capacity: number): void {
    if (capacity === this.times.length) return;
    const recent = this.recentFirst().slice(0, capacity).reverse();
    this.times = new Float64Array(capacity);
    this.times.set(recent);
    this.held = recent.length;
    this.next = recent.length % capacity;
  }

  private recentFirst(): number[] {
    const capacity = this.times.length;
    const out: number[] = [];
    for (let i = 1; i <= this.held; i++) out.push(this.times[(this.next - i + capacity) % capacity]!);
    return out;
  }
}
