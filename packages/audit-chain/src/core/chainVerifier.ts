/**
 * @module chainVerifier
 * The streaming chain verifier. It holds the previous hash, the next expected
 * id and a Merkle frontier, so memory stays O(log n) however long the log.
 * Feed it lines (or parsed entries) one at a time; it stops at the first bad
 * entry and names it.
 */
import { AGILEPLUS_GENESIS, agilePlusHashWith, normalizeAgilePlusHash } from './agileplus.js';
import { isHashHex, toHex } from './bytes.js';
import { canonicalizeWithout } from './canonicalize.js';
import { findDuplicateKey } from './duplicateKeys.js';
import { genesisHashWith, isRfc3339 } from './entry.js';
import type { HashSuite } from './hashSuite.js';
import { MerkleFrontier } from './merkle.js';
import type { Scheme, VerificationResult, VerifyErrorCode } from './result.js';
import { scanChainMembers } from './topLevel.js';

/** How thoroughly to check each line. */
export type VerifyMode =
  /** Every check: JSON shape, field formats, canonical form, hashes, links. */
  | 'strict'
  /**
   * Hashes and links only: the hash input is taken from the line's bytes
   * without re-canonicalizing. Any edit still fails (as HASH_MISMATCH), but
   * the error is less specific. About twice as fast as strict.
   */
  | 'hash-only';

/** Options of the chain verifier. */
export interface ChainVerifierOptions {
  scheme?: Scheme;
  /** Expected origin; entry 1's `prev_hash` must be its genesis hash. */
  origin?: string | undefined;
  mode?: VerifyMode;
  /** Sizes at which to record the root (for checkpoints and trusted states). */
  recordRootsAt?: readonly number[];
}

interface Failure {
  code: VerifyErrorCode;
  message: string;
}

/**
 * Verifies a chain incrementally.
 *
 * @example
 * ```ts
 * const verifier = new ChainVerifier(nodeHashSuite, { origin: 'demo' });
 * for (const line of lines) if (!verifier.pushLine(line)) break;
 * const result = verifier.finish();
 * ```
 */
export class ChainVerifier {
  private readonly suite: HashSuite;
  private readonly scheme: Scheme;
  private readonly strict: boolean;
  private readonly origin: string | undefined;
  private readonly frontier: MerkleFrontier;
  private readonly recordAt: Set<number>;
  private readonly recorded = new Map<number, string>();
  private readonly warnings: string[] = [];
  private expectedPrev: string | undefined;
  private lastId = 0;
  private verified = 0;
  private failure: (Failure & { id: number }) | undefined;

  constructor(suite: HashSuite, options: ChainVerifierOptions = {}) {
    this.suite = suite;
    this.scheme = options.scheme ?? 'jcs-sha256-v1';
    this.strict = (options.mode ?? 'strict') === 'strict';
    this.origin = options.origin;
    this.frontier = new MerkleFrontier(suite);
    this.recordAt = new Set(options.recordRootsAt ?? []);
    if (this.recordAt.has(0)) this.recorded.set(0, toHex(this.frontier.root()));
    if (this.scheme === 'agileplus-v1') {
      this.expectedPrev = AGILEPLUS_GENESIS;
    } else if (options.origin !== undefined) {
      this.expectedPrev = genesisHashWith(suite, options.origin);
    } else {
      this.warnings.push('no origin given: the genesis binding of entry 1 was not checked');
    }
  }

  /** Entries verified so far. */
  get size(): number {
    return this.verified;
  }

  /** Whether verification has stopped at a bad entry. */
  get failed(): boolean {
    return this.failure !== undefined;
  }

  /** Root recorded when the verified size reached `size`, if it did. */
  rootAt(size: number): string | undefined {
    return this.recorded.get(size);
  }

  /** Verifies one stored line (without its newline). Returns false once the chain has failed. */
  pushLine(line: string): boolean {
    if (this.failure) return false;
    const position = this.verified + 1;
    if (!this.strict && this.scheme === 'jcs-sha256-v1' && this.acceptFast(position, line)) return true;
    if (this.failure) return false;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (error) {
      const detail = line.length === 0 ? 'empty line' : (error as Error).message;
      return this.fail(position, 'PARSE_ERROR', `line ${position} is not JSON: ${detail}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return this.fail(position, 'PARSE_ERROR', `line ${position} is not a JSON object`);
    }
    return this.scheme === 'agileplus-v1'
      ? this.acceptAgilePlus(position, parsed as Record<string, unknown>)
      : this.acceptJcs(position, parsed as Record<string, unknown>, line);
  }

  /** Verifies one already-parsed entry. There is no stored line, so the canonical-form check does not apply. */
  pushEntry(entry: Record<string, unknown>): boolean {
    if (this.failure) return false;
    const position = this.verified + 1;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      return this.fail(position, 'PARSE_ERROR', `entry ${position} is not an object`);
    }
    return this.scheme === 'agileplus-v1' ? this.acceptAgilePlus(position, entry) : this.acceptJcs(position, entry, undefined);
  }

  /** Reports a complete line whose bytes are not UTF-8 (a BOM included): the stored form is UTF-8 text. */
  pushUndecodable(): boolean {
    if (this.failure) return false;
    const position = this.verified + 1;
    return this.fail(position, 'PARSE_ERROR', `line ${position} is not JSON: its bytes are not UTF-8 text`);
  }

  /** Reports a torn final line (bytes after the last newline). */
  pushTornTail(byteLength: number): void {
    if (this.failure) return;
    this.fail(
      this.verified + 1,
      'TORN_TAIL',
      `the last line is incomplete (${byteLength} bytes without a newline): a write was cut short; run \`audit-chain repair\``,
    );
  }

  /** The result so far. */
  finish(): VerificationResult {
    const failure = this.failure;
    return {
      valid: failure === undefined,
      entries_verified: this.verified,
      first_invalid_id: failure ? failure.id : null,
      error_message: failure ? failure.message : null,
      error_code: failure ? failure.code : null,
      tree_size: this.verified,
      root: toHex(this.frontier.root()),
      scheme: this.scheme,
      origin: this.origin ?? null,
      warnings: [...this.warnings],
    };
  }

  /**
   * Hash-only path: no parse, no canonical check. Returns false without
   * failing when the line is not shaped like an entry, so the strict path
   * can say precisely what is wrong with it.
   */
  private acceptFast(position: number, line: string): boolean {
    const members = scanChainMembers(line);
    if (members === undefined) return false;
    if (members.id !== position) {
      return this.fail(position, 'ID_SEQUENCE', `entry at position ${position} has id ${members.id}, expected ${position}`);
    }
    if (!this.checkLink(position, members.prevHash)) return false;
    if (this.suite.leafHex(members.hashInput) !== members.hash) {
      return this.fail(position, 'HASH_MISMATCH', `entry ${position}: hash does not match its content`);
    }
    this.accept(members.hash);
    return true;
  }

  private acceptJcs(position: number, entry: Record<string, unknown>, line: string | undefined): boolean {
    const { id, hash, prev_hash: prevHash } = entry;
    if (id !== position) {
      return this.fail(position, 'ID_SEQUENCE', `entry at position ${position} has id ${JSON.stringify(id)}, expected ${position}`);
    }
    if (typeof hash !== 'string' || typeof prevHash !== 'string') {
      return this.fail(position, 'INVALID_ENTRY', `entry ${position}: hash and prev_hash must be strings`);
    }
    // The format of hash and prev_hash is checked only when they fail to match, since a match implies it.
    if (!isRfc3339(entry.timestamp)) {
      return this.fail(position, 'INVALID_ENTRY', `entry ${position}: timestamp must be an RFC 3339 date-time`);
    }
    let canonical: { full: string; without: string };
    try {
      canonical = canonicalizeWithout(entry, 'hash');
    } catch (error) {
      return this.fail(position, 'INVALID_ENTRY', `entry ${position}: ${(error as Error).message}`);
    }
    if (line !== undefined && canonical.full !== line) {
      const duplicate = findDuplicateKey(line);
      if (duplicate !== undefined) {
        return this.fail(position, 'DUPLICATE_KEY', `entry ${position} repeats the key ${JSON.stringify(duplicate)}`);
      }
      // A checkout or editor that turned LF into CRLF breaks every line the same way: say so, not just "not canonical".
      const hint = line.endsWith('\r') ? ' (it ends in a carriage return: were the line endings converted to CRLF?)' : '';
      return this.fail(position, 'NOT_CANONICAL', `line ${position} is not in RFC 8785 canonical form${hint}`);
    }
    if (this.expectedPrev === undefined && !isHashHex(prevHash)) {
      return this.fail(position, 'INVALID_ENTRY', `entry ${position}: prev_hash must be 64 lower-case hex characters`);
    }
    if (!this.checkLink(position, prevHash)) return false;
    if (this.suite.leafHex(canonical.without) !== hash) {
      if (!isHashHex(hash)) return this.fail(position, 'INVALID_ENTRY', `entry ${position}: hash must be 64 lower-case hex characters`);
      return this.fail(position, 'HASH_MISMATCH', `entry ${position}: hash does not match its content`);
    }
    this.accept(hash);
    return true;
  }

  private acceptAgilePlus(position: number, entry: Record<string, unknown>): boolean {
    const { id, feature_id: featureId, wp_id: wpId, timestamp, actor, transition } = entry;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= this.lastId) {
      return this.fail(
        position,
        'ID_SEQUENCE',
        `entry at position ${position} has id ${JSON.stringify(id)}, expected more than ${this.lastId}`,
      );
    }
    const hash = normalizeAgilePlusHash(entry.hash);
    const prevHash = normalizeAgilePlusHash(entry.prev_hash);
    const wp = wpId ?? null;
    if (
      hash === undefined ||
      prevHash === undefined ||
      !Number.isSafeInteger(featureId) ||
      (wp !== null && !Number.isSafeInteger(wp)) ||
      typeof timestamp !== 'string' ||
      typeof actor !== 'string' ||
      typeof transition !== 'string'
    ) {
      return this.fail(
        position,
        'INVALID_ENTRY',
        `entry ${position} lacks a field of the agileplus-v1 scheme or has one of the wrong type`,
      );
    }
    if (!this.checkLink(position, prevHash)) return false;
    const computed = agilePlusHashWith(this.suite, {
      feature_id: featureId as number,
      wp_id: wp as number | null,
      timestamp,
      actor,
      transition,
      prev_hash: prevHash,
    });
    if (computed !== hash) return this.fail(position, 'HASH_MISMATCH', `entry ${position}: hash does not match its content`);
    this.lastId = id;
    this.accept(hash);
    return true;
  }

  private checkLink(position: number, prevHash: string): boolean {
    if (this.expectedPrev === undefined || prevHash === this.expectedPrev) return true;
    if (position === 1) {
      const expected =
        this.scheme === 'agileplus-v1' ? 'the all-zero genesis' : `the genesis hash of origin ${JSON.stringify(this.origin)}`;
      return this.fail(1, 'GENESIS_MISMATCH', `entry 1: prev_hash is not ${expected}`);
    }
    return this.fail(position, 'PREV_HASH_MISMATCH', `entry ${position}: prev_hash does not match the hash of entry ${position - 1}`);
  }

  private accept(hash: string): void {
    this.frontier.push(this.suite.hashBytes(hash));
    this.expectedPrev = hash;
    this.verified++;
    if (this.recordAt.has(this.verified)) this.recorded.set(this.verified, toHex(this.frontier.root()));
  }

  private fail(id: number, code: VerifyErrorCode, message: string): false {
    this.failure = { id, code, message };
    return false;
  }
}
