/**
 * @module consistentHashRing
 * A consistent-hash ring with virtual nodes, for `active_active` failover
 * across peer nodes: every node computes the same owner for a key, and
 * adding or removing one of N nodes moves only about 1/N of the keys.
 *
 * The hash is defined exactly, so that processes (and other languages)
 * agree: a position is the first 8 bytes of SHA-256 over the UTF-8 bytes of
 * a string, read as an unsigned big-endian 64-bit integer. Node `n` with
 * weight `w` has `round(virtualNodes × w)` points, at the positions of the
 * strings `"n#0"`, `"n#1"`, .... A key belongs to the node of the first
 * point at or after the key's position, wrapping past the top; points at
 * the same position are ordered by node name.
 */
import { hash } from 'node:crypto';
import { RoutingError } from '../errors.js';

/** Options of {@link ConsistentHashRing}. */
export interface ConsistentHashRingOptions {
  /** Points per node of weight 1. Default 160. */
  virtualNodes?: number;
}

/**
 * The ring position of `value`: the first 8 bytes of SHA-256(UTF-8 `value`),
 * big-endian, unsigned.
 *
 * @example
 * ```ts
 * ringPosition('abc'); // 0xba7816bf8f01cfean
 * ```
 */
export function ringPosition(value: string): bigint {
  return hash('sha256', value, 'buffer').readBigUInt64BE(0);
}

/**
 * Maps keys to nodes.
 *
 * @example
 * ```ts
 * const ring = new ConsistentHashRing(['node-a', 'node-b', 'node-c']);
 * ring.get('session-42');      // the same node on every process
 * ring.getN('session-42', 2);  // owner first, then the failover node
 * ```
 */
export class ConsistentHashRing {
  private readonly virtualNodes: number;
  private readonly weights = new Map<string, number>();
  /** Sorted positions, split in halves so the hot lookup compares plain numbers. */
  private high = new Uint32Array(0);
  private low = new Uint32Array(0);
  /** owner[i] indexes `names`. */
  private owner = new Uint32Array(0);
  private names: string[] = [];

  constructor(nodes: Iterable<string> = [], options: ConsistentHashRingOptions = {}) {
    const virtualNodes = options.virtualNodes ?? 160;
    if (!Number.isInteger(virtualNodes) || virtualNodes < 1 || virtualNodes > 10_000) {
      throw new RoutingError('invalid_config', 'virtualNodes must be an integer from 1 to 10000');
    }
    this.virtualNodes = virtualNodes;
    for (const node of nodes) this.weights.set(checkNode(node), 1);
    this.rebuild();
  }

  /** Number of nodes. */
  get size(): number {
    return this.weights.size;
  }

  /** Adds `node` (or changes its weight). A weight of 2 takes about twice the keys of a weight of 1. */
  add(node: string, weight = 1): void {
    checkNode(node);
    if (typeof weight !== 'number' || !Number.isFinite(weight) || Math.round(this.virtualNodes * weight) < 1 || weight > 1000) {
      throw new RoutingError(
        'invalid_argument',
        `weight of node ${JSON.stringify(node)} must be a number giving at least one point, at most 1000`,
      );
    }
    if (this.weights.get(node) === weight) return;
    this.weights.set(node, weight);
    this.rebuild();
  }

  /** Removes `node`; false if it was not on the ring. */
  remove(node: string): boolean {
    if (!this.weights.delete(node)) return false;
    this.rebuild();
    return true;
  }

  has(node: string): boolean {
    return this.weights.has(node);
  }

  /** The nodes, sorted by name. */
  nodes(): string[] {
    return [...this.weights.keys()].sort();
  }

  /** The node that owns `key`; undefined on an empty ring. O(log points). */
  get(key: string): string | undefined {
    if (this.owner.length === 0) return undefined;
    return this.names[this.owner[this.indexOf(key)]!];
  }

  /**
   * Up to `count` distinct nodes for `key`: the owner, then the next nodes
   * clockwise. The order to fail over in, the same on every process.
   */
  getN(key: string, count: number): string[] {
    const out: string[] = [];
    if (this.owner.length === 0 || count < 1) return out;
    const wanted = Math.min(count, this.names.length);
    const seen = new Uint8Array(this.names.length);
    const start = this.indexOf(key);
    for (let step = 0; step < this.owner.length && out.length < wanted; step++) {
      const index = this.owner[(start + step) % this.owner.length]!;
      if (seen[index]) continue;
      seen[index] = 1;
      out.push(this.names[index]!);
    }
    return out;
  }

  /** Index of the first point at or after `key`'s position, wrapping to 0. */
  private indexOf(key: string): number {
    const digest = hash('sha256', key, 'buffer');
    const high = digest.readUInt32BE(0);
    const low = digest.readUInt32BE(4);
    let lo = 0;
    let hi = this.high.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const h = this.high[mid]!;
      if (h < high || (h === high && this.low[mid]! < low)) lo = mid + 1;
      else hi = mid;
    }
    return lo === this.high.length ? 0 : lo;
  }

  private rebuild(): void {
    this.names = this.nodes();
    const points: Array<{ position: bigint; node: number }> = [];
    this.names.forEach((name, node) => {
      const count = Math.round(this.virtualNodes * this.weights.get(name)!);
      for (let i = 0; i < count; i++) points.push({ position: ringPosition(`${name}#${i}`), node });
    });
    // Names are sorted, so the node index breaks ties by name.
    points.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : a.node - b.node));
    this.high = new Uint32Array(points.length);
    this.low = new Uint32Array(points.length);
    this.owner = new Uint32Array(points.length);
    points.forEach((point, i) => {
      this.high[i] = Number(point.position >> 32n);
      this.low[i] = Number(point.position & 0xffffffffn);
      this.owner[i] = point.node;
    });
  }
}

function checkNode(node: unknown): string {
  if (typeof node !== 'string' || node.length === 0) throw new RoutingError('invalid_argument', 'a node must be a non-empty string');
  return node;
}
