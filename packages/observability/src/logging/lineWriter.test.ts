import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import fc from 'fast-check';
import pino from 'pino';
import { loggingConfigSchema } from '../config/schemas.js';
import type { RequestEndEvent } from '../events.js';
import { requestEnd } from '../testing/fixtures.js';
import { EventLog } from './eventLog.js';
import { isoTimestamp, lineWriterOf } from './lineWriter.js';
import { createLogger, loggerOptions } from './logger.js';

const START = Date.parse('2026-03-01T12:00:00.007Z');
const BASE = { service: 'switchyard' };

/** The line the template writes (createLogger's logger) and the one pino writes for the same event (a logger with the same options but no writer). */
function bothLines(event: RequestEndEvent, level: 'info' | 'warn' = 'info'): { template: string[]; pino: string[] } {
  const clock = new FakeScheduler(START);
  const template: string[] = [];
  const viaTemplate = createLogger(loggingConfigSchema.parse({ level }), {
    clock,
    base: BASE,
    destination: { write: (l: string) => void template.push(l) },
  });
  assert.ok(lineWriterOf(viaTemplate.logger), 'createLogger gives the logger a line writer');
  const reference: string[] = [];
  const viaPino = pino(loggerOptions({ level }, { clock, base: BASE }), { write: (l: string) => void reference.push(l) });
  assert.equal(lineWriterOf(viaPino), undefined);
  new EventLog(viaTemplate.logger).onRequestEnd(event);
  new EventLog(viaPino).onRequestEnd(event);
  return { template, pino: reference };
}

describe('the request line from a template', () => {
  test('is byte for byte the line pino writes, for every outcome and level', () => {
    const events = [
      requestEnd(),
      requestEnd({ outcome: 'client_closed', httpStatus: 499, ttfbMs: null }),
      requestEnd({ outcome: 'error', httpStatus: 429, errorType: 'rate_limited', provider: null, credentialId: null }),
      requestEnd({ outcome: 'error', httpStatus: 502, errorType: 'upstream_error', cached: true, attempts: 3 }),
      requestEnd({ latencyMs: 1.2345, ttfbMs: 0.5, tokens: { input: 0, output: 0 } }),
      requestEnd({ latencyMs: Number.NaN, ttfbMs: Number.POSITIVE_INFINITY }),
      requestEnd({ model: `m"\\\n\u0001é😀${'x'.repeat(400)}`, requestId: 'r'.repeat(1_000) }),
    ];
    for (const event of events) {
      for (const level of ['info', 'warn'] as const) {
        const { template, pino: reference } = bothLines(event, level);
        assert.deepEqual(template, reference, `${event.outcome} ${event.httpStatus} at ${level}`);
      }
    }
  });

  test('holds for any printable model name and request id', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.string({ maxLength: 60 }), (model, requestId) => {
        const { template, pino: reference } = bothLines(requestEnd({ model, requestId }));
        assert.deepEqual(template, reference);
      }),
      { numRuns: 200 },
    );
  });

  test('follows a level changed at run time', () => {
    const lines: string[] = [];
    const { logger } = createLogger(loggingConfigSchema.parse({}), { destination: { write: (l: string) => void lines.push(l) } });
    const log = new EventLog(logger);
    logger.level = 'error';
    log.onRequestEnd(requestEnd());
    log.onRequestEnd(requestEnd({ outcome: 'error', httpStatus: 429, errorType: 'rate_limited' }));
    assert.equal(lines.length, 0);
    log.onRequestEnd(requestEnd({ outcome: 'error', httpStatus: 502, errorType: 'upstream_error' }));
    assert.equal(lines.length, 1);
    assert.equal(JSON.parse(lines[0]!).level, 'error');
  });

  test('is not used when logging.redact names paths: those lines go through pino, redacted', () => {
    const lines: string[] = [];
    const { logger } = createLogger(loggingConfigSchema.parse({ redact: ['model'] }), {
      destination: { write: (l: string) => void lines.push(l) },
    });
    assert.equal(lineWriterOf(logger), undefined);
    new EventLog(logger).onRequestEnd(requestEnd({ model: 'secret-model' }));
    assert.equal(JSON.parse(lines[0]!).model, '[REDACTED]');
  });

  test('is not used for a destination that asks pino for line metadata (pino.multistream)', () => {
    const destination = { write: () => undefined, [Symbol.for('pino.metadata')]: true };
    const { logger } = createLogger(loggingConfigSchema.parse({}), { destination });
    assert.equal(lineWriterOf(logger), undefined);
  });
});

describe('isoTimestamp', () => {
  test('equals Date#toISOString, across second boundaries, before 1970 and with fractions of a millisecond', () => {
    for (const ms of [0, 999, 1000, 1001, -1, -999, -1000, -1001, START, START + 993, START + 1000, 1.5, 253402300799999]) {
      assert.equal(isoTimestamp(ms), new Date(ms).toISOString(), String(ms));
    }
    fc.assert(
      fc.property(fc.double({ min: -62198755200000, max: 253402300799999, noNaN: true }), (ms) => {
        assert.equal(isoTimestamp(ms), new Date(ms).toISOString());
      }),
      { numRuns: 2000 },
    );
  });

  test('every millisecond across seconds, days and years, and out of order: a cached second never leaks into another', () => {
    const starts = [
      0,
      Date.UTC(2026, 10, 28, 23, 59, 58, 990),
      Date.UTC(1999, 11, 31, 23, 59, 59),
      Date.UTC(2024, 1, 29),
      -1_500,
      253_402_300_799_000,
    ];
    for (const start of starts) {
      for (let ms = start; ms < start + 2_100; ms += 7) assert.equal(isoTimestamp(ms), new Date(ms).toISOString(), String(ms));
    }
    for (const ms of [5_000, 4_999, 5_001, 1_000_123, 5_002]) assert.equal(isoTimestamp(ms), new Date(ms).toISOString());
  });

  test('formats years past 9999 whole, as Date does', () => {
    assert.equal(isoTimestamp(253402300800000), new Date(253402300800000).toISOString());
  });
});
