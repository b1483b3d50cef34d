/**
 * The model-name glob: it matches as the anchored regular expression it
 * means, and never backtracks (its cost bound is counted in steps, not
 * timed).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Glob, type GlobSteps } from './glob.js';

/** The reference: a glob as the anchored regular expression it means (`*` any run, `?` one character). */
function globToRegExp(glob: string): RegExp {
  let source = '';
  for (const ch of glob) {
    if (ch === '*') source += '.*';
    else if (ch === '?') source += '.';
    else source += ch.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

function stepsOf(pattern: string, name: string): { matched: boolean; steps: number } {
  const steps: GlobSteps = { count: 0 };
  return { matched: new Glob(pattern).test(name, steps), steps: steps.count };
}

test('glob matching costs at most the name length times the pattern length, on hostile names too', () => {
  const cases: [string, (n: number) => string][] = [
    ['gemini-*-flash*', (n) => `gemini-${'-flash'.repeat(n)}`],
    ['gemini-*-flash*x', (n) => `gemini-${'-flash'.repeat(n)}`],
    ['*a*a*a*a*a*b', (n) => 'a'.repeat(n)],
    ['*-flash-*-pro-*-lite?', (n) => `${'-flash-'.repeat(n)}-pro-`],
  ];
  for (const [pattern, hostile] of cases) {
    for (const n of [10, 100, 1_000, 10_000]) {
      const name = hostile(n);
      const { steps } = stepsOf(pattern, name);
      assert.ok(steps <= name.length * pattern.length, `${pattern} on ${name.length} chars: ${steps} steps`);
    }
  }
  // Linear in N for the example: ten times the name, at most ten times the steps (plus a constant).
  const small = stepsOf('gemini-*-flash*', `gemini-${'-flash'.repeat(1_000)}`);
  const large = stepsOf('gemini-*-flash*', `gemini-${'-flash'.repeat(10_000)}`);
  assert.equal(small.matched, true);
  assert.equal(large.matched, true);
  assert.ok(large.steps <= 10 * small.steps + 100, `${small.steps} steps, then ${large.steps}`);
});

test('Glob matches as the anchored regular expression does', () => {
  const alphabet = fc.constantFrom('a', 'b', '-', '.', '*', '?');
  fc.assert(
    fc.property(
      fc.string({ unit: alphabet, maxLength: 8 }),
      fc.string({ unit: fc.constantFrom('a', 'b', '-', '.'), maxLength: 12 }),
      (pattern, name) => {
        assert.equal(new Glob(pattern).test(name), globToRegExp(pattern).test(name), `${pattern} vs ${name}`);
      },
    ),
    { numRuns: 2_000 },
  );
  assert.equal(new Glob('gemini-*-flash*').test('gemini-2.5-flash-lite'), true);
  assert.equal(new Glob('claude-?-*').test('claude-3-opus'), true);
  assert.equal(new Glob('claude-?-*').test('claude-35-opus'), false);
});
