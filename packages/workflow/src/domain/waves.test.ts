import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { WorkflowError } from '../errors.js';
import { computeWaves, effectiveDependencies, scopesOverlap } from './waves.js';

test('explicit dependencies and shared files order packages into waves', () => {
  assert.deepEqual(
    computeWaves([
      { sequence: 1, depends_on: [], file_scope: ['src/a.ts'] },
      { sequence: 2, depends_on: [], file_scope: ['src/a.ts'] },
      { sequence: 3, depends_on: [], file_scope: ['src/b.ts'] },
      { sequence: 4, depends_on: [2, 3], file_scope: [] },
    ]),
    [[1, 3], [2], [4]],
  );
  assert.ok(scopesOverlap(['src/'], ['src/lib/x.ts']));
  assert.ok(scopesOverlap(['./docs/a.md'], ['docs/a.md']));
  assert.ok(!scopesOverlap(['src/a.ts'], ['src/ab.ts']));
});

test('cycles and unknown dependencies are refused with the field named', () => {
  const cycle = () =>
    computeWaves([
      { sequence: 1, depends_on: [2], file_scope: [] },
      { sequence: 2, depends_on: [1], file_scope: [] },
    ]);
  assert.throws(cycle, (e: unknown) => e instanceof WorkflowError && e.details?.field === 'depends_on' && /1, 2/.test(e.message));
  assert.throws(() => computeWaves([{ sequence: 1, depends_on: [7], file_scope: [] }]), /does not exist/);
  assert.throws(() => computeWaves([{ sequence: 1, depends_on: [1], file_scope: [] }]), /itself/);
});

test('property: every package comes after all its prerequisites, and each appears once', () => {
  const arbitraryPlan = fc.integer({ min: 1, max: 12 }).chain((n) =>
    fc.tuple(
      ...Array.from({ length: n }, (_, i) =>
        fc.record({
          depends_on: fc.subarray(Array.from({ length: i }, (_, k) => k + 1)),
          file_scope: fc.subarray(['a.ts', 'b.ts', 'lib/', 'lib/c.ts', 'd.md']),
        }),
      ),
    ),
  );
  fc.assert(
    fc.property(arbitraryPlan, (specs) => {
      const packages = specs.map((s, i) => ({ sequence: i + 1, ...s }));
      const waves = computeWaves(packages);
      const waveOf = new Map(waves.flatMap((w, i) => w.map((s) => [s, i] as const)));
      assert.equal(waveOf.size, packages.length);
      for (const [seq, deps] of effectiveDependencies(packages)) for (const d of deps) assert.ok(waveOf.get(d)! < waveOf.get(seq)!);
    }),
  );
});
