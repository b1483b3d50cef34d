import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { InvalidExpression } from '../errors.js';
import { evaluateCondition, parseCondition } from './expression.js';
import { SIGNALS } from './signals.js';

const constant = (values: Record<string, number | string | undefined>) => (signal: { name: string }) => values[signal.name];

describe('the documented conditions', () => {
  test('error_rate > 0.05 is service-wide, over the default 1m window', () => {
    const c = parseCondition('error_rate > 0.05');
    assert.equal(c.scope, 'global');
    assert.equal(c.signals[0]!.windowMs, 60_000);
    assert.equal(evaluateCondition(c, constant({ error_rate: 0.06 }), null).active, true);
    assert.equal(evaluateCondition(c, constant({ error_rate: 0.05 }), null).active, false);
  });

  test('provider_health == unhealthy is per provider', () => {
    const c = parseCondition('provider_health == unhealthy');
    assert.equal(c.scope, 'provider');
    assert.equal(evaluateCondition(c, constant({ provider_health: 'unhealthy' }), 'p').active, true);
    assert.equal(evaluateCondition(c, constant({ provider_health: 'healthy' }), 'p').active, false);
    assert.equal(parseCondition("provider_health == 'unhealthy'").scope, 'provider');
  });

  test('rate_limit_count > 10', () => {
    const c = parseCondition('rate_limit_count > 10');
    assert.equal(evaluateCondition(c, constant({ rate_limit_count: 11 }), null).active, true);
    assert.equal(evaluateCondition(c, constant({ rate_limit_count: 10 }), null).active, false);
  });

  test('p95_latency > 5s compares seconds, with the quantile read from the name', () => {
    const c = parseCondition('p95_latency > 5s');
    assert.equal(c.signals[0]!.quantile, 0.95);
    assert.deepEqual(evaluateCondition(c, constant({ p95_latency: 5.2 }), null), { active: true, values: { 'p95_latency > 5s': 5.2 } });
    assert.equal(evaluateCondition(c, constant({ p95_latency: 4.9 }), null).active, false);
    assert.equal(evaluateCondition(parseCondition('p95_latency > 500ms'), constant({ p95_latency: 0.6 }), null).active, true);
  });
});

describe('the language', () => {
  test('and, or, not, parentheses, windows, percentages and by provider', () => {
    const c = parseCondition('(error_rate[5m] > 5% and request_count[5m] >= 20) or not in_flight < 1000');
    assert.equal(c.maxWindowMs, 300_000);
    assert.equal(c.signals.length, 3);
    const read = constant({ error_rate: 0.1, request_count: 25, in_flight: 5 });
    assert.equal(evaluateCondition(c, read, null).active, true);
    assert.equal(evaluateCondition(c, constant({ error_rate: 0.1, request_count: 5, in_flight: 5 }), null).active, false);
    assert.equal(parseCondition('error_rate > 0.1 by provider').scope, 'provider');
    assert.equal(parseCondition('error_rate > 0.1 && p99_ttfb > 2s || active_cooldowns >= 3').signals.length, 3);
  });

  test('a comparison without data is false, and its value is reported as null', () => {
    const result = evaluateCondition(parseCondition('error_rate > 0.05'), () => undefined, null);
    assert.deepEqual(result, { active: false, values: { 'error_rate > 0.05': null } });
    assert.equal(evaluateCondition(parseCondition('error_rate != 0'), () => undefined, null).active, false);
  });

  test('every catalogue signal parses', () => {
    for (const [name, spec] of Object.entries(SIGNALS)) {
      const value = spec.kind === 'health' ? 'healthy' : spec.kind === 'seconds' ? '1s' : '1';
      const op = spec.kind === 'health' ? '==' : '>';
      assert.doesNotThrow(() => parseCondition(`${name} ${op} ${value}`), name);
    }
  });

  const rejects: [string, RegExp][] = [
    ['', /empty/],
    ['error_rate', /expected a comparison/],
    ['error_rate >', /expected a value/],
    ['error_rate = 1', /single "="/],
    ['error_rate > 5s', /duration compares only with a latency/],
    ['rate_limit_count > 5%', /percentage compares only with a ratio/],
    ['provider_health > 1', /only with == or !=/],
    ['provider_health == sick', /healthy or unhealthy/],
    ['in_flight[5m] > 1', /not computed over a window/],
    ['error_rate[0s] > 1', /expected a window/],
    ['p100_latency > 1s', /unknown signal/],
    ['error_rate > 1 and', /expected a signal name/],
    ['(error_rate > 1', /expected "\)"/],
    ['error_rate > 1 by model', /expected "provider"/],
    ['gate_failures > 1 by provider', /no per-provider value/],
    ['in_flight > 1 and provider_health == unhealthy', /no per-provider value/],
    ['error_rate > 1 error_rate > 2', /unexpected "error_rate"/],
    ['error_rate > 5xyz', /unknown unit/],
    ["provider_health == 'unhealthy", /unterminated string/],
    ['error_rate > 1 $', /unexpected character/],
  ];
  for (const [source, message] of rejects) {
    test(`rejects ${JSON.stringify(source)} with a column`, () => {
      assert.throws(
        () => parseCondition(source),
        (e: unknown) =>
          e instanceof InvalidExpression && e.code === 'invalid_expression' && message.test(e.message) && /column \d+/.test(e.message),
      );
    });
  }

  test('any input either parses or fails with InvalidExpression, never anything else (property)', () => {
    const pieces = fc.constantFrom(
      'error_rate',
      'p95_latency',
      'provider_health',
      '>',
      '==',
      '(',
      ')',
      '[5m]',
      'and',
      'or',
      'not',
      '5s',
      '0.05',
      '5%',
      'unhealthy',
      'by',
      'provider',
      "'x'",
      ' ',
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.array(pieces, { maxLength: 12 }).map((p) => p.join(' ')),
        ),
        (source) => {
          try {
            const parsed = parseCondition(source);
            const result = evaluateCondition(parsed, () => 1, parsed.scope === 'provider' ? 'p' : null);
            assert.equal(typeof result.active, 'boolean');
          } catch (error) {
            assert.ok(error instanceof InvalidExpression, String(error));
            assert.ok(error.position >= 0 && error.position <= source.length);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
