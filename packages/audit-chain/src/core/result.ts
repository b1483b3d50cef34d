/**
 * @module result
 * The verification result every verifier returns, and its error codes.
 */

/** Why a verification failed. Stable: tools branch on these. */
export type VerifyErrorCode =
  /** An entry's `hash` is not the hash of its content. */
  | 'HASH_MISMATCH'
  /** An entry's `prev_hash` is not the previous entry's `hash`. */
  | 'PREV_HASH_MISMATCH'
  /** An `id` is not the next in sequence (deleted, duplicated or reordered lines). */
  | 'ID_SEQUENCE'
  /** A line is not the RFC 8785 canonical form of its content (re-spaced, keys reordered). */
  | 'NOT_CANONICAL'
  /** An object repeats a key. */
  | 'DUPLICATE_KEY'
  /** A line is not a JSON object. */
  | 'PARSE_ERROR'
  /** A required field is missing or malformed (bad timestamp, hash not 64 hex). */
  | 'INVALID_ENTRY'
  /** Entry 1's `prev_hash` is not the genesis hash of the expected origin. */
  | 'GENESIS_MISMATCH'
  /** The log has fewer entries than a checkpoint or trusted state covers. */
  | 'TRUNCATED'
  /** The last line has no newline: a write was cut short. `audit-chain repair` fixes it. */
  | 'TORN_TAIL'
  /** The root of the covered entries differs from the checkpoint's root. */
  | 'ROOT_MISMATCH'
  /** No trusted key signed the checkpoint, or a signature does not verify. */
  | 'BAD_SIGNATURE'
  /** The checkpoint is malformed. */
  | 'BAD_CHECKPOINT'
  /** The checkpoint or trusted state names another log. */
  | 'ORIGIN_MISMATCH'
  /** A checkpoint older (smaller) than the trusted state: a replay. */
  | 'ROLLBACK'
  /** Same size as the trusted state with another root, or a history that does not extend it. */
  | 'FORK';

/** The outcome of verifying a chain. Field names are snake_case because this is also the CLI's JSON output. */
export interface VerificationResult {
  valid: boolean;
  /** Entries that passed every check, from the start of the log. */
  entries_verified: number;
  /** Position-based id (line number) of the first bad entry, or `null`. */
  first_invalid_id: number | null;
  error_message: string | null;
  error_code: VerifyErrorCode | null;
  /** Size of the Merkle tree over the verified entries (= `entries_verified`). */
  tree_size: number;
  /** Hex RFC 6962 root over the verified entries. */
  root: string;
  scheme: Scheme;
  /** The origin the genesis hash was checked against, or `null` when none was known. */
  origin: string | null;
  /** Checks that could not run, such as the genesis binding without an origin. */
  warnings: string[];
}

/** Hashing schemes the verifier understands. */
export type Scheme = 'jcs-sha256-v1' | 'agileplus-v1';

/** The schemes, for option parsing. */
export const SCHEMES: readonly Scheme[] = ['jcs-sha256-v1', 'agileplus-v1'];

/** A verifier's remembered view of a log: never accept anything that does not extend it. */
export interface TrustedState {
  origin: string;
  size: number;
  /** Hex root at `size`. */
  root: string;
}
