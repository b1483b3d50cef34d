/**
 * @module limits
 * The arithmetic of a key's limits, pure and clock-free: budget periods on
 * UTC boundaries, and per-minute rate limits as a GCRA (generic cell rate
 * algorithm). A GCRA keeps one number per limit (the theoretical arrival
 * time), admits a burst of a minute's allowance, and tells exactly when the
 * next unit fits: that instant is the `Retry-After` of a refusal.
 */
import type { BudgetPeriod } from './clientKeyRecord.js';

const MINUTE_MS = 60_000;

/** One budget period: its start as the stores name it (`2026-11-28` or `2026-11`) and its bounds in ms. */
export interface PeriodWindow {
  start: string;
  startMs: number;
  endMs: number;
}

/** The period of `kind` that holds `now`: UTC days, and UTC calendar months. */
export function periodAt(kind: BudgetPeriod, now: number): PeriodWindow {
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  if (kind === 'daily') {
    const startMs = Date.UTC(year, month, date.getUTCDate());
    return { start: new Date(startMs).toISOString().slice(0, 10), startMs, endMs: startMs + 24 * 60 * 60 * 1000 };
  }
  const startMs = Date.UTC(year, month, 1);
  return { start: new Date(startMs).toISOString().slice(0, 7), startMs, endMs: Date.UTC(year, month + 1, 1) };
}

/**
 * A per-minute limit as a GCRA. `tat` is the theoretical arrival time: each unit pushes it on by
 * `60,000 / perMinute` ms, and a unit is admitted while `tat` is less than a minute ahead of now.
 */
export class MinuteRate {
  private tat = 0;

  constructor(private perMinute: number) {}

  /** Takes a new limit; the debt built so far is kept in time, so lowering a limit does not forgive it. */
  setLimit(perMinute: number): void {
    this.perMinute = perMinute;
  }

  /** Admits one request (and counts it) or answers in how many ms one fits. */
  take(now: number): number {
    const interval = MINUTE_MS / this.perMinute;
    const next = Math.max(this.tat, now) + interval;
    if (next - now > MINUTE_MS) return next - MINUTE_MS - now;
    this.tat = next;
    return 0;
  }

  /** Gives back the request `take` counted last (a request refused for another reason). */
  refund(): void {
    this.tat -= MINUTE_MS / this.perMinute;
  }

  /** Whether anything fits now (0), or in how many ms it will; counts nothing (tokens are counted after the request). */
  wait(now: number): number {
    const ahead = this.tat - now;
    return ahead >= MINUTE_MS ? ahead - MINUTE_MS + MINUTE_MS / this.perMinute : 0;
  }

  /** Counts `units` already used (a request's tokens, known at its end). */
  add(units: number, now: number): void {
    if (units <= 0) return;
    this.tat = Math.max(this.tat, now) + (units * MINUTE_MS) / this.perMinute;
  }
}
