/**
 * A scheduler for tests of code that waits on real I/O between timers (the
 * device-flow poll loop against a local server): each timer fires on the
 * next turn of the event loop, and the clock jumps forward by its delay.
 * Every requested delay is recorded, so tests assert the intervals
 * (`slow_down` adds five seconds) without waiting for them.
 */
import type { Scheduler, TimerHandle } from '@switchyard/runtime';

export class InstantScheduler implements Scheduler {
  /** Delays requested, in order. */
  readonly waits: number[] = [];
  private current: number;
  private readonly cancelled = new WeakSet<object>();

  constructor(startMs = Date.parse('2026-05-01T09:00:00.000Z')) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const handle = {};
    this.waits.push(delayMs);
    setImmediate(() => {
      if (this.cancelled.has(handle)) return;
      this.current += Math.max(0, delayMs);
      callback();
    });
    return handle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.cancelled.add(handle as object);
  }
}
