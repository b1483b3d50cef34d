import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { durationMs } from './duration.js';

// Frozen copies of the three readers that `durationMs` replaced (as of 4866dd3), used as
// oracles: every input one of them accepted must still be accepted, with the value it gave.

/** relay/src/retryAfter.ts `parseGoDuration`: `x-ratelimit-reset-*` headers; no `d`/`w`, no bare numbers, not rounded. */
function oldRelay(text: string): number | undefined {
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let matched = '';
  for (const match of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(match[1]) * unit[match[2]!]!;
    matched += match[0];
  }
  return matched.length > 0 && matched === text.trim() ? total : undefined;
}

/** credentials/src/util/time.ts `parseDuration`: `auth.*` config; no `w`, no bare-number strings. */
function oldCredentials(value: string | number): number | undefined {
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(value.trim())) return undefined;
  let total = 0;
  for (const [, amount, , u] of value.trim().matchAll(/(\d+(\.\d+)?)(ms|s|m|h|d)/g)) total += Number(amount) * unit[u!]!;
  return Math.round(total);
}

/** observability/src/config/units.ts `parseDuration`: the gateway config and alert rules; `w` and bare numbers. */
function oldObservability(input: string | number): number | undefined {
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
  const part = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/y;
  if (typeof input === 'number') return Number.isFinite(input) && input >= 0 ? input : undefined;
  const text = input.trim();
  if (/^\d+$/.test(text)) return Number(text);
  let total = 0;
  let at = 0;
  while (at < text.length) {
    part.lastIndex = at;
    const match = part.exec(text);
    if (!match) break;
    total += Number(match[1]) * unit[match[2]!]!;
    at = part.lastIndex;
  }
  if (text.length === 0 || at !== text.length) return undefined;
  return Math.round(total);
}

const TABLE: Array<
  [input: string | number, relay: number | undefined, credentials: number | undefined, observability: number | undefined]
> = [
  ['250ms', 250, 250, 250],
  ['30s', 30_000, 30_000, 30_000],
  ['5m', 300_000, 300_000, 300_000],
  ['1h30m', 5_400_000, 5_400_000, 5_400_000],
  ['6m0s', 360_000, 360_000, 360_000],
  ['1h2m3.5s', 3_723_500, 3_723_500, 3_723_500],
  ['1.5ms', 1.5, 2, 2],
  [' 20s ', 20_000, 20_000, 20_000],
  ['1d', undefined, 86_400_000, 86_400_000],
  ['1w', undefined, undefined, 604_800_000],
  ['100', undefined, undefined, 100],
  [42, undefined, 42, 42],
  [0.5, undefined, 0.5, 0.5],
  ['', undefined, undefined, undefined],
  ['5x', undefined, undefined, undefined],
  ['1h 30m', undefined, undefined, undefined],
  ['-5s', undefined, undefined, undefined],
  ['1.5', undefined, undefined, undefined],
  [-1, undefined, undefined, undefined],
  [Number.NaN, undefined, undefined, undefined],
];

test('the old readers behaved as the table says (the oracles are faithful)', () => {
  for (const [input, relay, credentials, observability] of TABLE) {
    if (typeof input === 'string') assert.equal(oldRelay(input), relay, `relay ${input}`);
    assert.equal(oldCredentials(input), credentials, `credentials ${String(input)}`);
    assert.equal(oldObservability(input), observability, `observability ${String(input)}`);
  }
});

test('durationMs accepts what any old reader accepted: 1w is a week and "100" is 100 ms', () => {
  for (const [input, relay, credentials, observability] of TABLE) {
    const rounded = credentials ?? observability;
    assert.equal(durationMs(input), rounded ?? (relay === undefined ? undefined : Math.round(relay)), String(input));
    if (relay !== undefined) assert.equal(durationMs(input, { exact: true }), relay, `exact ${String(input)}`);
  }
});

const UNITS = ['ms', 's', 'm', 'h', 'd', 'w', 'x', ''];
const durationText = fc.oneof(
  fc
    .array(fc.tuple(fc.nat({ max: 100_000 }), fc.option(fc.nat({ max: 999 }), { nil: undefined }), fc.constantFrom(...UNITS)), {
      minLength: 1,
      maxLength: 4,
    })
    .chain((parts) =>
      fc
        .tuple(fc.constantFrom('', ' ', '\t'), fc.constantFrom('', ' ', '-'), fc.constantFrom('', ' '))
        .map(
          ([lead, between, trail]) =>
            lead +
            parts.map(([n, fraction, unit]) => `${n}${fraction === undefined ? '' : `.${fraction}`}${unit}`).join(between ? between : '') +
            trail,
        ),
    ),
  fc.string({ maxLength: 8 }),
  fc.stringMatching(/^[0-9.smhdw ]{1,8}$/),
);

test('every string an old reader accepted keeps its value (property)', () => {
  fc.assert(
    fc.property(durationText, (text) => {
      const relay = oldRelay(text);
      if (relay !== undefined) assert.equal(durationMs(text, { exact: true }), relay);
      for (const old of [oldCredentials(text), oldObservability(text)]) if (old !== undefined) assert.equal(durationMs(text), old);
      // And nothing that none of them read, except what one of them reads with another unit (d, w) or bare.
      if (relay === undefined && oldCredentials(text) === undefined && oldObservability(text) === undefined)
        assert.equal(durationMs(text), undefined);
    }),
    { numRuns: 5000 },
  );
});

test('every number an old reader accepted keeps its value (property)', () => {
  fc.assert(
    fc.property(fc.double(), (n) => {
      const old = oldCredentials(n);
      assert.equal(oldObservability(n), old);
      assert.equal(durationMs(n), old);
    }),
  );
});
