import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { nodeHashSuite } from '../node/nodeHashSuite.js';
import { fromHex, toHex } from './bytes.js';
import { portableHashSuite } from './hashSuite.js';
import { MerkleFrontier, MerkleTree, merkleRootWith, verifyConsistencyWith, verifyInclusionWith } from './merkle.js';

const sha = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};
const leafHash = (data: Uint8Array) => sha(new Uint8Array([0]), data);

// The RFC 6962 reference tree from transparency-dev/merkle (testonly): leaf inputs and roots of every prefix.
const LEAF_INPUTS = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'];
const ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
const INCLUSION = [
  { index: 0, size: 1, proof: [] },
  { index: 0, size: 2, proof: ['96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7'] },
  { index: 1, size: 2, proof: ['6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d'] },
  { index: 2, size: 3, proof: ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125'] },
  {
    index: 1,
    size: 5,
    proof: [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
  {
    index: 0,
    size: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    index: 5,
    size: 8,
    proof: [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
];
const CONSISTENCY = [
  { first: 1, second: 1, proof: [] },
  {
    first: 1,
    second: 8,
    proof: [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  },
  {
    first: 2,
    second: 5,
    proof: [
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  },
  {
    first: 6,
    second: 8,
    proof: [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  },
];

const referenceLeaves = LEAF_INPUTS.map((hex) => leafHash(fromHex(hex)));

function treeOf(leaves: Uint8Array[], suite = nodeHashSuite): MerkleTree {
  const tree = new MerkleTree(suite);
  for (const leaf of leaves) tree.append(leaf);
  return tree;
}

// A naive RFC 6962 §2.1 implementation, written straight from the recursive definitions.
function naiveRoot(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return sha();
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha(new Uint8Array([1]), naiveRoot(leaves.slice(0, k)), naiveRoot(leaves.slice(k)));
}
function naivePath(m: number, leaves: Uint8Array[]): Uint8Array[] {
  if (leaves.length <= 1) return [];
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return m < k
    ? [...naivePath(m, leaves.slice(0, k)), naiveRoot(leaves.slice(k))]
    : [...naivePath(m - k, leaves.slice(k)), naiveRoot(leaves.slice(0, k))];
}
function naiveSubproof(m: number, leaves: Uint8Array[], b: boolean): Uint8Array[] {
  const n = leaves.length;
  if (m === n) return b ? [] : [naiveRoot(leaves)];
  let k = 1;
  while (k * 2 < n) k *= 2;
  return m <= k
    ? [...naiveSubproof(m, leaves.slice(0, k), b), naiveRoot(leaves.slice(k))]
    : [...naiveSubproof(m - k, leaves.slice(k), false), naiveRoot(leaves.slice(0, k))];
}
const randomLeaves = (n: number, seed: number) => Array.from({ length: n }, (_, i) => sha(new TextEncoder().encode(`leaf ${seed} ${i}`)));

describe('merkle: RFC 6962 known answers', () => {
  test('empty tree root is SHA-256 of nothing (e3b0c442…)', () => {
    assert.equal(toHex(treeOf([]).root()), ROOTS[0]);
    assert.equal(toHex(merkleRootWith(nodeHashSuite, [])), ROOTS[0]);
  });

  test('a single empty leaf has root 6e340b9c…', () => {
    assert.equal(toHex(merkleRootWith(nodeHashSuite, [leafHash(new Uint8Array())])), ROOTS[1]);
  });

  for (const suite of [nodeHashSuite, portableHashSuite]) {
    const which = suite === nodeHashSuite ? 'node:crypto' : 'portable';
    test(`every prefix of the reference tree has the published root (${which})`, () => {
      const tree = treeOf(referenceLeaves, suite);
      for (let size = 0; size <= 8; size++) {
        assert.equal(toHex(tree.root(size)), ROOTS[size], `size ${size}`);
        assert.equal(toHex(merkleRootWith(suite, referenceLeaves.slice(0, size))), ROOTS[size]);
      }
    });
  }

  test('inclusion proofs equal the published ones and verify', () => {
    const tree = treeOf(referenceLeaves);
    for (const v of INCLUSION) {
      const proof = tree.inclusionProof(v.index, v.size);
      assert.deepEqual(proof.map(toHex), v.proof, `PATH(${v.index}, ${v.size})`);
      assert.ok(verifyInclusionWith(nodeHashSuite, v.index, v.size, referenceLeaves[v.index]!, proof, fromHex(ROOTS[v.size]!)));
    }
  });

  test('consistency proofs equal the published ones and verify', () => {
    const tree = treeOf(referenceLeaves);
    for (const v of CONSISTENCY) {
      const proof = tree.consistencyProof(v.first, v.second);
      assert.deepEqual(proof.map(toHex), v.proof, `PROOF(${v.first}, ${v.second})`);
      assert.ok(verifyConsistencyWith(nodeHashSuite, v.first, v.second, fromHex(ROOTS[v.first]!), fromHex(ROOTS[v.second]!), proof));
    }
  });
});

describe('merkle: against a naive reference tree', () => {
  test('roots, audit paths and consistency proofs match for every size up to 70', () => {
    const leaves = randomLeaves(70, 1);
    const tree = treeOf(leaves);
    for (let n = 1; n <= 70; n++) {
      const prefix = leaves.slice(0, n);
      const root = naiveRoot(prefix);
      assert.equal(toHex(tree.root(n)), toHex(root));
      for (let m = 0; m < n; m++) {
        const path = tree.inclusionProof(m, n);
        assert.deepEqual(path.map(toHex), naivePath(m, prefix).map(toHex));
        assert.ok(verifyInclusionWith(nodeHashSuite, m, n, prefix[m]!, path, root));
      }
      for (let m = 1; m <= n; m++) {
        const proof = tree.consistencyProof(m, n);
        assert.deepEqual(proof.map(toHex), naiveSubproof(m, prefix, true).map(toHex));
        assert.ok(verifyConsistencyWith(nodeHashSuite, m, n, naiveRoot(prefix.slice(0, m)), root, proof));
      }
    }
  });

  test('property: random sizes and indices up to 5,000 leaves', () => {
    const leaves = randomLeaves(5000, 2);
    const tree = treeOf(leaves);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.nat(), fc.nat(), (n, i, j) => {
        const m = i % n;
        const prefix = leaves.slice(0, n);
        const root = tree.root(n);
        assert.equal(toHex(root), toHex(naiveRoot(prefix)));
        const path = tree.inclusionProof(m, n);
        assert.deepEqual(path.map(toHex), naivePath(m, prefix).map(toHex));
        assert.ok(verifyInclusionWith(nodeHashSuite, m, n, leaves[m]!, path, root));
        const first = (j % n) + 1;
        const proof = tree.consistencyProof(first, n);
        assert.ok(verifyConsistencyWith(nodeHashSuite, first, n, tree.root(first), root, proof));
      }),
      { numRuns: 150 },
    );
  });

  test('the streaming frontier gives the same root as the tree at every size', () => {
    const leaves = randomLeaves(300, 3);
    const tree = treeOf(leaves);
    const frontier = new MerkleFrontier(nodeHashSuite);
    assert.equal(toHex(frontier.root()), toHex(tree.root(0)));
    leaves.forEach((leaf, i) => {
      frontier.push(leaf);
      assert.equal(toHex(frontier.root()), toHex(tree.root(i + 1)));
    });
  });
});

describe('merkle: bad proofs are refused, never thrown on', () => {
  const leaves = randomLeaves(37, 4);
  const tree = treeOf(leaves);
  const root = tree.root();

  test('property: any single change to an inclusion proof makes it fail', () => {
    fc.assert(
      fc.property(fc.nat({ max: 36 }), fc.nat(), fc.nat({ max: 31 }), (index, which, byte) => {
        const path = tree.inclusionProof(index);
        assert.ok(verifyInclusionWith(nodeHashSuite, index, 37, leaves[index]!, path, root));
        if (path.length > 0) {
          const bad = path.map((p) => p.slice());
          bad[which % bad.length]![byte]! ^= 1;
          assert.equal(verifyInclusionWith(nodeHashSuite, index, 37, leaves[index]!, bad, root), false);
        }
        assert.equal(verifyInclusionWith(nodeHashSuite, (index + 1) % 37, 37, leaves[index]!, path, root), false);
        assert.equal(verifyInclusionWith(nodeHashSuite, index, 37, leaves[(index + 1) % 37]!, path, root), false);
        assert.equal(verifyInclusionWith(nodeHashSuite, index, 37, leaves[index]!, path.slice(1), root), false);
        assert.equal(verifyInclusionWith(nodeHashSuite, index, 37, leaves[index]!, [...path, root], root), false);
      }),
      { numRuns: 200 },
    );
  });

  test('out-of-range indices and sizes return false', () => {
    const path = tree.inclusionProof(3);
    assert.equal(verifyInclusionWith(nodeHashSuite, -1, 37, leaves[3]!, path, root), false);
    assert.equal(verifyInclusionWith(nodeHashSuite, 37, 37, leaves[3]!, path, root), false);
    assert.equal(verifyInclusionWith(nodeHashSuite, 1.5, 37, leaves[3]!, path, root), false);
    assert.equal(verifyConsistencyWith(nodeHashSuite, 5, 3, root, root, []), false);
  });

  test('consistency: a rewritten history does not prove consistent with the old root', () => {
    const rewritten = leaves.slice();
    rewritten[2] = sha(new TextEncoder().encode('forged'));
    const forged = treeOf(rewritten);
    const proof = forged.consistencyProof(10, 37);
    assert.equal(verifyConsistencyWith(nodeHashSuite, 10, 37, tree.root(10), forged.root(), proof), false);
  });

  test('consistency with the empty tree needs the empty root; equal sizes need equal roots', () => {
    assert.ok(verifyConsistencyWith(nodeHashSuite, 0, 37, tree.root(0), root, []));
    assert.equal(verifyConsistencyWith(nodeHashSuite, 0, 37, root, root, []), false);
    assert.ok(verifyConsistencyWith(nodeHashSuite, 37, 37, root, root, []));
    assert.equal(verifyConsistencyWith(nodeHashSuite, 37, 37, root, tree.root(36), []), false);
    assert.equal(verifyConsistencyWith(nodeHashSuite, 37, 37, root, root, [root]), false);
  });

  test('tree methods throw OUT_OF_RANGE for impossible requests', () => {
    assert.throws(() => tree.inclusionProof(37), /OUT_OF_RANGE|outside/);
    assert.throws(() => tree.consistencyProof(38), /outside/);
    assert.throws(() => tree.root(38), /outside/);
    assert.throws(() => tree.append(new Uint8Array(31)), /32 bytes/);
  });
});
