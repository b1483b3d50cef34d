/**
 * @module entry
 * The entry format of scheme `jcs-sha256-v1`: what an entry is, how it is
 * sealed (given `id`, `prev_hash` and `hash`) and how a chain is bound to
 * its log through the genesis hash. SPEC.md states the same byte for byte.
 */
import { toHex, utf8 } from './bytes.js';
import { canonicalizeWithout, type JsonObject, type JsonValue } from './canonicalize.js';
import { AuditChainError } from './errors.js';
import type { HashSuite } from './hashSuite.js';

/** A stored entry: caller fields plus the four the chain owns. */
export type AuditEntry = JsonObject & {
  id: number;
  timestamp: string;
  prev_hash: string;
  hash: string;
};

/** Fields a caller supplies; the chain fills in the rest. `timestamp` is optional. */
export type EntryFields = { [key: string]: JsonValue | undefined } & { timestamp?: string };

/** A sealed entry and its stored form (one line of JCS, without the newline). */
export interface SealedEntry {
  entry: AuditEntry;
  line: string;
}

/** The chain's own fields; a caller may not set them. */
export const RESERVED_FIELDS = ['id', 'prev_hash', 'hash'] as const;

/** Domain-separation prefix of the genesis hash. */
export const GENESIS_DOMAIN = 'switchyard-audit-chain/v1/genesis\n';

const isDigit = (code: number): boolean => code >= 48 && code <= 57;

/** Reads `length` decimal digits at `at`, or -1. */
function digits(text: string, at: number, length: number): number {
  let value = 0;
  for (let i = at; i < at + length; i++) {
    const code = text.charCodeAt(i);
    if (!isDigit(code)) return -1;
    value = value * 10 + (code - 48);
  }
  return value;
}

/**
 * True when `value` is an RFC 3339 date-time (section 5.6), with range
 * checks on every field. Leap seconds (`:60`) are accepted as the RFC allows.
 * Hand-written rather than a regex: the verifier calls it once per entry.
 */
export function isRfc3339(value: unknown): value is string {
  if (typeof value !== 'string' || value.length < 20) return false;
  const year = digits(value, 0, 4);
  const month = digits(value, 5, 2);
  const day = digits(value, 8, 2);
  const hour = digits(value, 11, 2);
  const minute = digits(value, 14, 2);
  const second = digits(value, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60)
    return false;
  if (value[4] !== '-' || value[7] !== '-' || value[13] !== ':' || value[16] !== ':') return false;
  const t = value[10];
  if (t !== 'T' && t !== 't') return false;
  if (day > 28 && day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return false;
  let i = 19;
  if (value[i] === '.') {
    i++;
    const fractionStart = i;
    while (i < value.length && isDigit(value.charCodeAt(i))) i++;
    if (i === fractionStart) return false;
  }
  const zone = value[i];
  if (zone === 'Z' || zone === 'z') return i + 1 === value.length;
  if (zone !== '+' && zone !== '-') return false;
  if (i + 6 !== value.length || value[i + 3] !== ':') return false;
  const offsetHour = digits(value, i + 1, 2);
  const offsetMinute = digits(value, i + 4, 2);
  return offsetHour >= 0 && offsetHour <= 23 && offsetMinute >= 0 && offsetMinute <= 59;
}

/**
 * Checks that `origin` can name a log: non-empty, one line, no leading or
 * trailing space (it is the first line of every checkpoint).
 */
export function assertValidOrigin(origin: string): void {
  if (typeof origin !== 'string' || origin.length === 0) {
    throw new AuditChainError('INVALID_ORIGIN', 'origin must be a non-empty string');
  }
  if (/[\n\r]/.test(origin) || origin.trim() !== origin) {
    throw new AuditChainError('INVALID_ORIGIN', 'origin must be one line without surrounding whitespace');
  }
}

/**
 * `prev_hash` of entry 1: hex(SHA-256(UTF-8(GENESIS_DOMAIN + origin))).
 * Binding the first link to the log's name stops entries being replayed into
 * another log.
 */
export function genesisHashWith(suite: HashSuite, origin: string): string {
  assertValidOrigin(origin);
  return toHex(suite.digest(utf8(GENESIS_DOMAIN + origin)));
}

/** What `sealEntry` needs to seal one entry. */
export interface SealInput {
  id: number;
  prevHash: string;
  /** Used when `fields.timestamp` is absent. */
  timestamp: string;
  fields: EntryFields;
}

/**
 * Builds the stored entry: caller fields, plus `id`, `timestamp`,
 * `prev_hash`, and `hash = hex(SHA-256(0x00 || JCS(entry without hash)))`.
 */
export function sealEntryWith(suite: HashSuite, input: SealInput): SealedEntry {
  const { fields } = input;
  for (const key of RESERVED_FIELDS) {
    if (key in fields && fields[key] !== undefined) {
      throw new AuditChainError('INVALID_ENTRY', `field "${key}" is set by the chain and may not be supplied`);
    }
  }
  if (!Number.isSafeInteger(input.id) || input.id < 1) {
    throw new AuditChainError('INVALID_ENTRY', `id must be a positive integer, got ${input.id}`);
  }
  const timestamp = fields.timestamp ?? input.timestamp;
  if (!isRfc3339(timestamp)) {
    throw new AuditChainError('INVALID_ENTRY', `timestamp must be RFC 3339, got ${JSON.stringify(timestamp)}`);
  }
  const body: Record<string, unknown> = { ...fields, id: input.id, timestamp, prev_hash: input.prevHash, hash: '' };
  const { without } = canonicalizeWithout(body, 'hash');
  body.hash = suite.leafHex(without);
  const { full } = canonicalizeWithout(body, 'hash');
  return { entry: body as AuditEntry, line: full };
}
