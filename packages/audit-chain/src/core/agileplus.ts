/**
 * @module agileplus
 * Scheme `agileplus-v1`: the hash AgilePlus writes into its JSONL audit
 * trail, so that Switchyard can verify chains it did not write.
 *
 * hash = SHA-256( i64le(feature_id) || [i64le(wp_id) when not null]
 *                 || UTF-8(timestamp as written) || UTF-8(actor)
 *                 || UTF-8(transition) || prev_hash (32 raw bytes) )
 * Genesis `prev_hash` is 32 zero bytes.
 */
import { concatBytes, fromHex, isHashHex, toHex, utf8 } from './bytes.js';
import type { HashSuite } from './hashSuite.js';

/** Genesis `prev_hash` of an AgilePlus chain. */
export const AGILEPLUS_GENESIS = '0'.repeat(64);

/**
 * AgilePlus serializes hashes either as hex or as an array of 32 bytes
 * (serde's default for `[u8; 32]`); both normalize to lower-case hex.
 */
export function normalizeAgilePlusHash(value: unknown): string | undefined {
  if (typeof value === 'string') {
    const lower = value.toLowerCase();
    return isHashHex(lower) ? lower : undefined;
  }
  if (Array.isArray(value) && value.length === 32 && value.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
    return toHex(Uint8Array.from(value as number[]));
  }
  return undefined;
}

function i64le(value: number): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigInt64(0, BigInt(value), true);
  return out;
}

/** The fields the AgilePlus hash covers. */
export interface AgilePlusHashInput {
  feature_id: number;
  wp_id: number | null;
  timestamp: string;
  actor: string;
  transition: string;
  prev_hash: string;
}

/** Computes an AgilePlus entry hash (hex). */
export function agilePlusHashWith(suite: HashSuite, input: AgilePlusHashInput): string {
  const parts = [i64le(input.feature_id)];
  if (input.wp_id !== null) parts.push(i64le(input.wp_id));
  parts.push(utf8(input.timestamp), utf8(input.actor), utf8(input.transition), fromHex(input.prev_hash));
  return toHex(suite.digest(concatBytes(...parts)));
}
