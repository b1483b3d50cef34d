import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { RoutingError } from '../errors.js';
import { ConsistentHashRing, ringPosition } from './consistentHashRing.js';

const keys = (n: number, prefix = 'key') => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** The definition, spelled out the slow way: every point, a linear scan, bigints. */
function oracle(nodes: Array<[string, number]>, virtualNodes: number, key: string): string | undefined {
  const points: Array<[bigint, string]> = [];
  for (const [name, weight] of nodes) {
    for (let i = 0; i < Math.round(virtualNodes * weight); i++) points.push([ringPosition(`${name}#${i}`), name]);
  }
  if (points.length === 0) return undefined;
  const position = ringPosition(key);
  let best: [bigint, string] | undefined;
  let lowest: [bigint, string] | undefined;
  const before = (a: [bigint, string], b: [bigint, string]) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
  for (const point of points) {
    if (!lowest || before(point, lowest)) lowest = point;
    if (point[0] >= position && (!best || before(point, best))) best = point;
  }
  return (best ?? lowest)![1];
}

const nodeName = fc.stringMatching(/^[a-z0-9.:-]{1,12}$/);

describe('ConsistentHashRing', () => {
  test('positions are the first 8 bytes of SHA-256, big-endian (FIPS 180-2 test vector "abc")', () => {
    assert.equal(ringPosition('abc'), 0xba7816bf8f01cfean);
    assert.equal(ringPosition(''), 0xe3b0c44298fc1c14n);
  });

  test('property: get() is the definition (first point at or after the key, wrapping; ties by name)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(nodeName, fc.constantFrom(0.5, 1, 2)), { minLength: 1, maxLength: 6, selector: ([name]) => name }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.string(), { minLength: 1, maxLength: 30 }),
        (nodes, virtualNodes, sampleKeys) => {
          const ring = new ConsistentHashRing([], { virtualNodes });
          for (const [name, weight] of nodes) ring.add(name, weight);
          for (const key of sampleKeys) assert.equal(ring.get(key), oracle(nodes, virtualNodes, key));
        },
      ),
      { numRuns: 200 },
    );
  });

  test('property: adding one node moves keys only to it, and about 1/N of them; removing it moves them back', () => {
    const sample = keys(4000);
    fc.assert(
      fc.property(fc.uniqueArray(nodeName, { minLength: 2, maxLength: 16 }), nodeName, (existing, added) => {
        fc.pre(!existing.includes(added));
        const ring = new ConsistentHashRing(existing);
        const before = sample.map((key) => ring.get(key));
        ring.add(added);
        const after = sample.map((key) => ring.get(key));
        let moved = 0;
        for (let i = 0; i < sample.length; i++) {
          if (before[i] === after[i]) continue;
          moved++;
          assert.equal(after[i], added, 'a key only ever moves to the new node');
        }
        const expected = sample.length / (existing.length + 1);
        assert.ok(moved > expected * 0.5 && moved < expected * 1.6, `moved ${moved}, expected about ${Math.round(expected)}`);
        ring.remove(added);
        assert.deepEqual(
          sample.map((key) => ring.get(key)),
          before,
        );
      }),
      { numRuns: 40 },
    );
  });

  test('ten nodes of equal weight each own 10% ± 3% of 20,000 keys; weight 2 owns about twice', () => {
    const nodes = keys(10, 'node');
    const ring = new ConsistentHashRing(nodes);
    const counts = new Map<string, number>();
    for (const key of keys(20_000)) counts.set(ring.get(key)!, (counts.get(ring.get(key)!) ?? 0) + 1);
    for (const node of nodes) assert.ok(Math.abs(counts.get(node)! / 20_000 - 0.1) < 0.03, `${node}: ${counts.get(node)}`);
    ring.add('node-0', 2);
    const heavy = keys(20_000).filter((key) => ring.get(key) === 'node-0').length / 20_000;
    assert.ok(heavy > 0.14 && heavy < 0.22, `weight 2 owns ${heavy}`);
  });

  test('getN gives distinct nodes, owner first, in the order the ring gives after removing the owner', () => {
    const ring = new ConsistentHashRing(['a', 'b', 'c', 'd']);
    for (const key of keys(200)) {
      const list = ring.getN(key, 3);
      assert.equal(list.length, 3);
      assert.equal(new Set(list).size, 3);
      assert.equal(list[0], ring.get(key));
      const without = new ConsistentHashRing(ring.nodes().filter((n) => n !== list[0]));
      assert.equal(without.get(key), list[1], 'the second choice is where the key goes if the owner leaves');
    }
    assert.deepEqual(ring.getN('k', 10).sort(), ['a', 'b', 'c', 'd']);
    assert.deepEqual(new ConsistentHashRing().getN('k', 2), []);
  });

  test('the same owners in another process (nothing depends on process state)', async () => {
    const ring = new ConsistentHashRing(['node-a', 'node-b', 'node-c']);
    const sample = keys(50, 'session');
    const script = `
      import { ConsistentHashRing } from ${JSON.stringify(fileURLToPath(new URL('./consistentHashRing.ts', import.meta.url)))};
      const ring = new ConsistentHashRing(['node-c', 'node-b', 'node-a']);
      console.log(JSON.stringify(${JSON.stringify(sample)}.map((key) => ring.get(key))));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import=tsx', '--input-type=module', '-e', script], {
      timeout: 60_000,
    });
    assert.deepEqual(
      JSON.parse(stdout),
      sample.map((key) => ring.get(key)),
    );
  });

  test('nodes(), has(), size, and refusals', () => {
    const ring = new ConsistentHashRing(['b', 'a']);
    assert.deepEqual(ring.nodes(), ['a', 'b']);
    assert.equal(ring.size, 2);
    assert.equal(ring.has('a'), true);
    assert.equal(ring.remove('zz'), false);
    assert.equal(ring.remove('a'), true);
    assert.equal(ring.get('anything'), 'b');
    ring.remove('b');
    assert.equal(ring.get('anything'), undefined);
    const invalid = (e: unknown) => e instanceof RoutingError && /invalid_/.test(e.code);
    assert.throws(() => ring.add(''), invalid);
    assert.throws(() => ring.add('x', 0), invalid);
    assert.throws(() => ring.add('x', Number.NaN), invalid);
    assert.throws(() => new ConsistentHashRing([], { virtualNodes: 0 }), invalid);
  });
});
