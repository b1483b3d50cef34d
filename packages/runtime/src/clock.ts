/**
 * @module clock
 * Injected time. Every class in this package that reads the time or waits
 * takes a `Clock` or `Scheduler`, so tests of cooldowns, health checks and
 * refresh schedules run on a {@link FakeScheduler} in milliseconds, with no
 * sleeps. (The pattern follows TanStack Query's timeoutManager.)
 */

/** A source of the current time in epoch milliseconds. */
export interface Clock {
  now(): number;
}

/** An opaque handle to a scheduled callback. */
export type TimerHandle = { readonly __timer: unique symbol } | object;

/** A clock that can also run callbacks later. */
export interface Scheduler extends Clock {
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/**
 * Real time. Timers are `unref`ed: background loops never keep a process
 * alive on their own.
 */
export const systemScheduler: Scheduler = {
  now: () => Date.now(),
  setTimeout(callback, delayMs) {
    const timer = setTimeout(callback, delayMs);
    timer.unref?.();
    return timer;
  },
  clearTimeout(handle) {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

/** The system clock. */
export const systemClock: Clock = systemScheduler;

/**
 * Runs `task` every `intervalMs` on `scheduler` until the returned function
 * is called. The next run is scheduled after the current one settles, so a
 * slow async task never overlaps itself.
 *
 * @example
 * ```ts
 * const stop = every(scheduler, 30_000, () => monitor.checkAll());
 * ```
 */
export function every(scheduler: Scheduler, intervalMs: number, task: () => unknown): () => void {
  let stopped = false;
  let handle: TimerHandle | undefined;
  const run = async () => {
    if (stopped) return;
    try {
      await task();
    } catch {
      // A failing task must not end the loop; the task reports its own errors.
    }
    if (!stopped) handle = scheduler.setTimeout(run, intervalMs);
  };
  handle = scheduler.setTimeout(run, intervalMs);
  return () => {
    stopped = true;
    if (handle !== undefined) scheduler.clearTimeout(handle);
  };
}

interface FakeTimer {
  id: number;
  at: number;
  callback: () => void;
}

/**
 * A scheduler whose time moves only when told to. Timers fire in time
 * order (then in creation order), including timers they create.
 *
 * @example
 * ```ts
 * const clock = new FakeScheduler(Date.parse('2026-01-01T00:00:00Z'));
 * const cooldowns = new CooldownManager({ scheduler: clock });
 * await clock.advance(60_000);
 * ```
 */
export class FakeScheduler implements Scheduler {
  private current: number;
  private nextId = 1;
  private timers: FakeTimer[] = [];

  constructor(startMs = 0) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const timer = { id: this.nextId++, at: this.current + Math.max(0, delayMs), callback };
    this.timers.push(timer);
    return { id: timer.id };
  }

  clearTimeout(handle: TimerHandle): void {
    const id = (handle as { id?: number }).id;
    this.timers = this.timers.filter((t) => t.id !== id);
  }

  /** Number of timers waiting to fire. */
  get pending(): number {
    return this.timers.length;
  }

  /** Sets the time without firing timers (for tests that need a jump). */
  set(ms: number): void {
    this.current = ms;
  }

  /**
   * Moves time forward by `ms`, firing every timer that comes due, in order.
   * Between timers it lets pending promise callbacks run, so async work a
   * timer starts (a health check, a refresh) settles before the next one.
   */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      await flushMicrotasks();
      const next = this.earliestDue(target);
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.current = next.at;
      next.callback();
    }
    this.current = target;
    await flushMicrotasks();
  }

  private earliestDue(limit: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const timer of this.timers) {
      if (timer.at > limit) continue;
      if (!best || timer.at < best.at || (timer.at === best.at && timer.id < best.id)) best = timer;
    }
    return best;
  }
}

/** Lets queued promise callbacks run (several rounds, for chains of awaits). */
async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
  await new Promise<void>((resolve) => setImmediate(resolve));
}
