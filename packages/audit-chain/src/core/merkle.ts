/**
 * @module merkle
 * RFC 6962 (and RFC 9162 §2.1) Merkle trees over the chain's leaf hashes:
 * the root of any prefix, inclusion and consistency proofs, and their
 * verification. An uneven tree splits at the largest power of two below its
 * size; no node is ever duplicated.
 */
import { bytesEqual, fromHex, isHashHex } from './bytes.js';
import { AuditChainError } from './errors.js';
import type { HashSuite } from './hashSuite.js';

/** Largest power of two strictly below `n` (n >= 2). */
export function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  if (n < 1) return false;
  return n <= 0x7fffffff ? (n & (n - 1)) === 0 : Number.isInteger(Math.log2(n));
}

/**
 * Streaming root computation in O(log n) memory: keeps one hash per set bit
 * of the size (the roots of the perfect subtrees that tile the prefix).
 */
export class MerkleFrontier {
  private readonly suite: HashSuite;
  /** Perfect-subtree roots, left to right; heights strictly decrease. */
  private readonly hashes: Uint8Array[] = [];
  private readonly heights: number[] = [];
  private count = 0;

  constructor(suite: HashSuite) {
    this.suite = suite;
  }

  /** Number of leaves pushed. */
  get size(): number {
    return this.count;
  }

  /** Adds the next leaf hash (32 bytes). */
  push(leafHash: Uint8Array): void {
    let node = leafHash;
    let height = 0;
    while (this.heights.length > 0 && this.heights[this.heights.length - 1] === height) {
      this.heights.pop();
      node = this.suite.node(this.hashes.pop()!, node);
      height++;
    }
    this.hashes.push(node);
    this.heights.push(height);
    this.count++;
  }

  /** Root of the leaves pushed so far (SHA-256 of nothing for an empty tree). */
  root(): Uint8Array {
    if (this.hashes.length === 0) return this.suite.digest(new Uint8Array(0));
    let acc = this.hashes[this.hashes.length - 1]!;
    for (let i = this.hashes.length - 2; i >= 0; i--) acc = this.suite.node(this.hashes[i]!, acc);
    return acc;
  }
}

/** A growable array of 32-byte hashes in one buffer, so a million leaves cost 32 MB, not a million objects. */
class HashArray {
  private buffer = new Uint8Array(32 * 1024);
  length = 0;

  push(hash: Uint8Array): void {
    if ((this.length + 1) * 32 > this.buffer.length) {
      const grown = new Uint8Array(this.buffer.length * 2);
      grown.set(this.buffer);
      this.buffer = grown;
    }
    this.buffer.set(hash, this.length * 32);
    this.length++;
  }

  get(index: number): Uint8Array {
    return this.buffer.subarray(index * 32, index * 32 + 32);
  }
}

/**
 * An append-only Merkle tree that keeps every complete subtree, so the root
 * of any prefix and any proof cost O(log n) hashes.
 *
 * @example
 * ```ts
 * const tree = new MerkleTree(nodeHashSuite);
 * for (const entry of entries) tree.append(fromHex(entry.hash));
 * const proof = tree.inclusionProof(0);
 * ```
 */
export class MerkleTree {
  private readonly suite: HashSuite;
  /** levels[k][j] = root of leaves [j·2^k, (j+1)·2^k). */
  private readonly levels: HashArray[] = [new HashArray()];

  constructor(suite: HashSuite) {
    this.suite = suite;
  }

  /** Number of leaves. */
  get size(): number {
    return this.levels[0]!.length;
  }

  /** Appends a leaf hash (32 bytes). */
  append(leafHash: Uint8Array): void {
    if (leafHash.length !== 32) throw new AuditChainError('INVALID_ARGUMENT', 'a leaf hash is 32 bytes');
    let index = this.levels[0]!.length;
    this.levels[0]!.push(leafHash);
    let level = 0;
    while (index % 2 === 1) {
      const current = this.levels[level]!;
      const parent = this.suite.node(current.get(index - 1), current.get(index));
      level++;
      if (this.levels.length <= level) this.levels.push(new HashArray());
      this.levels[level]!.push(parent);
      index = (index - 1) / 2;
    }
  }

  /** The leaf hash at `index`. */
  leaf(index: number): Uint8Array {
    this.checkRange(index, 0, this.size - 1, 'leaf index');
    return this.levels[0]!.get(index);
  }

  /** Root of the first `size` leaves (default: all). */
  root(size: number = this.size): Uint8Array {
    this.checkRange(size, 0, this.size, 'tree size');
    if (size === 0) return this.suite.digest(new Uint8Array(0));
    return this.subtree(0, size);
  }

  /** RFC 6962 audit path for the leaf at `index` in the tree of the first `size` leaves. */
  inclusionProof(index: number, size: number = this.size): Uint8Array[] {
    this.checkRange(size, 1, this.size, 'tree size');
    this.checkRange(index, 0, size - 1, 'leaf index');
    const path: Uint8Array[] = [];
    this.path(index, 0, size, path);
    return path;
  }

  /** RFC 6962 consistency proof between the trees of the first `first` and `second` leaves. */
  consistencyProof(first: number, second: number = this.size): Uint8Array[] {
    this.checkRange(second, 0, this.size, 'second size');
    this.checkRange(first, 0, second, 'first size');
    const proof: Uint8Array[] = [];
    if (first === 0 || first === second) return proof;
    this.subproof(first, 0, second, true, proof);
    return proof;
  }

  /** MTH(D[start:end]); `start` is always aligned to the left subtree in RFC 6962 recursion. */
  private subtree(start: number, end: number): Uint8Array {
    const n = end - start;
    if (n === 1) return this.levels[0]!.get(start);
    if (isPowerOfTwo(n) && start % n === 0) {
      const level = Math.round(Math.log2(n));
      return this.levels[level]!.get(start / n);
    }
    const k = largestPowerOfTwoBelow(n);
    return this.suite.node(this.subtree(start, start + k), this.subtree(start + k, end));
  }

  private path(index: number, start: number, end: number, out: Uint8Array[]): void {
    const n = end - start;
    if (n <= 1) return;
    const k = largestPowerOfTwoBelow(n);
    if (index - start < k) {
      this.path(index, start, start + k, out);
      out.push(this.subtree(start + k, end));
    } else {
      this.path(index, start + k, end, out);
      out.push(this.subtree(start, start + k));
    }
  }

  private subproof(m: number, start: number, end: number, isOriginalRoot: boolean, out: Uint8Array[]): void {
    const n = end - start;
    if (m === n) {
      if (!isOriginalRoot) out.push(this.subtree(start, end));
      return;
    }
    const k = largestPowerOfTwoBelow(n);
    if (m <= k) {
      this.subproof(m, start, start + k, isOriginalRoot, out);
      out.push(this.subtree(start + k, end));
    } else {
      this.subproof(m - k, start + k, end, false, out);
      out.push(this.subtree(start, start + k));
    }
  }

  private checkRange(value: number, min: number, max: number, what: string): void {
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      throw new AuditChainError('OUT_OF_RANGE', `${what} ${value} is outside [${min}, ${max}]`);
    }
  }
}

/** Root of a list of leaf hashes: RFC 6962 MTH. */
export function merkleRootWith(suite: HashSuite, leaves: Iterable<Uint8Array>): Uint8Array {
  const frontier = new MerkleFrontier(suite);
  for (const leaf of leaves) frontier.push(leaf);
  return frontier.root();
}

/** An inclusion proof in the JSON form the CLI reads and writes. */
export interface InclusionProof {
  /** 0-based position of the leaf (entry id − 1). */
  leaf_index: number;
  tree_size: number;
  /** The entry's `hash`. */
  leaf_hash: string;
  audit_path: string[];
  /** Root the proof leads to, when known. */
  root?: string;
}

/** A consistency proof in JSON form. */
export interface ConsistencyProof {
  first_size: number;
  second_size: number;
  first_root?: string;
  second_root?: string;
  proof: string[];
}

const half = (n: number): number => Math.floor(n / 2);
const isOdd = (n: number): boolean => n % 2 === 1;

function decodeHashes(hexes: readonly string[]): Uint8Array[] | undefined {
  const out: Uint8Array[] = [];
  for (const hex of hexes) {
    if (!isHashHex(hex)) return undefined;
    out.push(fromHex(hex));
  }
  return out;
}

/**
 * RFC 9162 §2.1.3.2: does `proof` show that `leafHash` is leaf `index` of the
 * tree of `treeSize` leaves whose root is `root`? Never throws on bad input.
 */
export function verifyInclusionWith(
  suite: HashSuite,
  index: number,
  treeSize: number,
  leafHash: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(treeSize) || index < 0 || index >= treeSize) return false;
  let fn = index;
  let sn = treeSize - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return false;
    if (isOdd(fn) || fn === sn) {
      r = suite.node(p, r);
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      r = suite.node(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && bytesEqual(r, root);
}

/**
 * RFC 9162 §2.1.4.2: does `proof` show that the tree of `first` leaves with
 * root `firstRoot` is a prefix of the tree of `second` leaves with root
 * `secondRoot`? Never throws on bad input.
 */
export function verifyConsistencyWith(
  suite: HashSuite,
  first: number,
  second: number,
  firstRoot: Uint8Array,
  secondRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0 || first > second) return false;
  if (first === second) return proof.length === 0 && bytesEqual(firstRoot, secondRoot);
  // Every tree extends the empty tree, whose root is SHA-256 of nothing.
  if (first === 0) return proof.length === 0 && bytesEqual(firstRoot, suite.digest(new Uint8Array(0)));
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof];
  if (path.length === 0) return false;
  let fn = first - 1;
  let sn = second - 1;
  while (isOdd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (let i = 1; i < path.length; i++) {
    const c = path[i]!;
    if (sn === 0) return false;
    if (isOdd(fn) || fn === sn) {
      fr = suite.node(c, fr);
      sr = suite.node(c, sr);
      while (!isOdd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      sr = suite.node(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && bytesEqual(fr, firstRoot) && bytesEqual(sr, secondRoot);
}

/** {@link verifyInclusionWith} over the JSON form; `root` must be given or present in the proof. */
export function verifyInclusionProofWith(suite: HashSuite, proof: InclusionProof, root?: string): boolean {
  const rootHex = root ?? proof.root;
  if (!isHashHex(rootHex) || !isHashHex(proof.leaf_hash) || !Array.isArray(proof.audit_path)) return false;
  const path = decodeHashes(proof.audit_path);
  if (!path) return false;
  return verifyInclusionWith(suite, proof.leaf_index, proof.tree_size, fromHex(proof.leaf_hash), path, fromHex(rootHex));
}

/** {@link verifyConsistencyWith} over the JSON form. */
export function verifyConsistencyProofWith(suite: HashSuite, proof: ConsistencyProof, firstRoot?: string, secondRoot?: string): boolean {
  const a = firstRoot ?? proof.first_root;
  const b = secondRoot ?? proof.second_root;
  if (!isHashHex(a) || !isHashHex(b) || !Array.isArray(proof.proof)) return false;
  const path = decodeHashes(proof.proof);
  if (!path) return false;
  return verifyConsistencyWith(suite, proof.first_size, proof.second_size, fromHex(a), fromHex(b), path);
}
