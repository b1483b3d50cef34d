/**
 * @module nodeHashSuite
 * The hash suite on `node:crypto`. `crypto.hash` is a one-shot digest with
 * no Hash object to allocate, and it UTF-8-encodes strings itself, so a leaf
 * hash is one call: `hash('sha256', '\0' + canonicalJson)`. Interior nodes
 * are the exception: see `sha256Node`.
 */
import { hash } from 'node:crypto';
import type { HashSuite } from '../core/hashSuite.js';
import { sha256Node } from '../core/sha256.js';

/** SHA-256 through `node:crypto`. */
export const nodeHashSuite: HashSuite = {
  leafHex: (text) => hash('sha256', `\u0000${text}`, 'hex'),
  // For 65-byte node inputs the JS implementation beats crypto.hash's per-call overhead (see bench/).
  node: sha256Node,
  digest: (data) => hash('sha256', data, 'buffer'),
  hashBytes: (hex) => Buffer.from(hex, 'hex'),
};
