import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { RequestWindow, UptimeTracker } from './slidingWindows.js';

describe('RequestWindow', () => {
  test('property: totals equal a full list of samples filtered to the last 60 one-second buckets', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ dt: fc.integer({ min: 0, max: 5000 }), ok: fc.boolean(), latency: fc.integer({ min: 0, max: 2000 }) }), {
          maxLength: 300,
        }),
        fc.integer({ min: 0, max: 120_000 }),
        (samples, after) => {
          const window = new RequestWindow();
          const all: Array<{ at: number; ok: boolean; latency: number }> = [];
          let now = 1_700_000_000_000;
          for (const s of samples) {
            now += s.dt;
            window.record(now, s.ok, s.latency);
            all.push({ at: now, ok: s.ok, latency: s.latency });
          }
          now += after;
          const second = Math.floor(now / 1000);
          const inside = all.filter((s) => Math.floor(s.at / 1000) > second - 60);
          const totals = window.totals(now);
          assert.equal(totals.requests, inside.length);
          assert.equal(totals.errors, inside.filter((s) => !s.ok).length);
          const mean = inside.length ? inside.reduce((sum, s) => sum + s.latency, 0) / inside.length : null;
          if (mean === null) assert.equal(totals.averageLatencyMs, null);
          else assert.ok(Math.abs(totals.averageLatencyMs! - mean) < 1e-6);
        },
      ),
    );
  });
});

describe('UptimeTracker', () => {
  const HOUR = 3_600_000;

  test('time-weighted share of healthy time; the window is the last 24 hours', () => {
    const start = Date.UTC(2026, 0, 1);
    const uptime = new UptimeTracker(start, true);
    assert.equal(uptime.percent(start), 100, 'nothing observed yet');
    uptime.set(start + 3 * HOUR, false);
    assert.equal(uptime.percent(start + 4 * HOUR), 75);
    uptime.set(start + 4 * HOUR, true);
    assert.equal(uptime.percent(start + 8 * HOUR), 87.5);
    assert.equal(uptime.percent(start + 40 * HOUR), 100, 'the outage is more than a day old');
    uptime.set(start + 40 * HOUR, false);
    assert.equal(uptime.percent(start + 100 * HOUR), 0, 'down for more than a day');
  });

  test('property: equals an exact integration of the status over whole hours', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 6 }), { maxLength: 40 }), (gapsInHours) => {
        const start = Date.UTC(2026, 0, 1);
        const uptime = new UptimeTracker(start, true);
        const spans: Array<{ from: number; to: number; healthy: boolean }> = [];
        let now = start;
        let healthy = true;
        for (const gap of gapsInHours) {
          spans.push({ from: now, to: now + gap * HOUR, healthy });
          now += gap * HOUR;
          healthy = !healthy;
          uptime.set(now, healthy);
        }
        const from = Math.max(start, now - 24 * HOUR);
        let up = 0;
        for (const span of spans) if (span.healthy) up += Math.max(0, span.to - Math.max(span.from, from));
        const expected = now > from ? Math.round((up / (now - from)) * 10_000) / 100 : 100;
        assert.equal(uptime.percent(now), expected);
      }),
    );
  });
});
