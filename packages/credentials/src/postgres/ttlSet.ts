/**
 * @module ttlSet
 * A bounded set whose members expire, for de-duplicating event ids. Every
 * member lives the same time, so insertion order is expiry order and
 * pruning only ever looks at the oldest members.
 */
import type { Clock } from '@switchyard/runtime';

/** Remembers strings for `ttlMs`, at most `maxSize` of them (the oldest go first). */
export class TtlSet {
  private readonly expiries = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly maxSize: number,
  ) {}

  /** Adds `value`; false when it was already present (and unexpired). */
  add(value: string): boolean {
    const now = this.clock.now();
    this.prune(now);
    if (this.expiries.has(value)) return false;
    this.expiries.set(value, now + this.ttlMs);
    if (this.expiries.size > this.maxSize) this.expiries.delete(this.expiries.keys().next().value as string);
    return true;
  }

  get size(): number {
    return this.expiries.size;
  }

  private prune(now: number): void {
    for (const [value, expiresAt] of this.expiries) {
      if (expiresAt > now) return;
      this.expiries.delete(value);
    }
  }
}
