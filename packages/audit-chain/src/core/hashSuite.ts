/**
 * @module hashSuite
 * The three hash operations the format needs, behind one interface so the
 * same verifier core runs on `node:crypto` (fast) or on pure JavaScript
 * (browsers). Domain separation follows RFC 6962: 0x00 prefixes leaves and
 * 0x01 prefixes interior nodes.
 */
import { concatBytes, fromHex, toHex, utf8 } from './bytes.js';
import { sha256, sha256Node } from './sha256.js';

/** Hash primitives used by the chain, the Merkle tree and checkpoints. */
export interface HashSuite {
  /** hex(SHA-256(0x00 || UTF-8(text))): the RFC 6962 leaf hash of a canonical entry. */
  leafHex(text: string): string;
  /** SHA-256(0x01 || left || right): an RFC 6962 interior node. */
  node(left: Uint8Array, right: Uint8Array): Uint8Array;
  /** Plain SHA-256. */
  digest(data: Uint8Array): Uint8Array;
  /** Decodes a 64-character hex hash (the verifier does this once per entry). */
  hashBytes(hex: string): Uint8Array;
}

const LEAF_PREFIX = new Uint8Array([0]);

/** A suite over the pure-JS SHA-256: works anywhere, slower than `node:crypto`. */
export const portableHashSuite: HashSuite = {
  leafHex: (text) => toHex(sha256(concatBytes(LEAF_PREFIX, utf8(text)))),
  node: sha256Node,
  digest: sha256,
  hashBytes: fromHex,
};
