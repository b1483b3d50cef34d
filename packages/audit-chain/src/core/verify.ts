/**
 * @module verify
 * Whole-log verification: the chain itself, then what anchors it from
 * outside (a signed checkpoint and the verifier's trusted state). Runs over
 * arrays, sync iterables or async iterables of lines, in O(log n) memory.
 */
import { ChainVerifier, type ChainVerifierOptions } from './chainVerifier.js';
import { AuditChainError } from './errors.js';
import type { HashSuite } from './hashSuite.js';
import { splitLineBatches } from './jsonlLines.js';
import { verifyConsistencyProofWith } from './merkle.js';
import { type Checkpoint, checkNoteSignatures, type NoteVerifier, parseCheckpoint, parseSignedNote } from './note.js';
import type { TrustedState, VerificationResult, VerifyErrorCode } from './result.js';

/** Options of `verifyChain`, `verifyFile` and `verifyJsonl`. */
export interface VerifyChainOptions extends Omit<ChainVerifierOptions, 'recordRootsAt'> {
  /** A signed checkpoint note the log must match. Its origin is used when `origin` is not given. */
  checkpoint?: string | undefined;
  /** Keys trusted to sign checkpoints; required with `checkpoint`. */
  verifiers?: readonly NoteVerifier[] | undefined;
  /** The verifier's last trusted view of the log; nothing may roll it back or fork it. */
  trustedState?: TrustedState | undefined;
}

/** What to verify: stored lines (strings) or parsed entries, in log order. */
export type ChainSource = Iterable<string | Record<string, unknown>> | AsyncIterable<string | Record<string, unknown>>;

/** A verified checkpoint, reported alongside a chain result. */
export interface CheckpointOutcome {
  checkpoint?: Checkpoint;
  signedBy: string[];
  failure?: { code: VerifyErrorCode; message: string };
}

/** Parses a checkpoint note and checks its signatures and origin; never throws for bad input. */
export async function checkCheckpointWith(
  note: string,
  verifiers: readonly NoteVerifier[],
  expectedOrigin: string | undefined,
): Promise<CheckpointOutcome> {
  let checkpoint: Checkpoint;
  let signedNote: ReturnType<typeof parseSignedNote>;
  try {
    signedNote = parseSignedNote(note);
    checkpoint = parseCheckpoint(signedNote.text);
  } catch (error) {
    return { signedBy: [], failure: { code: 'BAD_CHECKPOINT', message: `checkpoint is malformed: ${(error as Error).message}` } };
  }
  if (verifiers.length === 0) {
    return {
      checkpoint,
      signedBy: [],
      failure: { code: 'BAD_SIGNATURE', message: 'no public key was given to check the checkpoint signature' },
    };
  }
  const { verifiedBy, failedBy } = await checkNoteSignatures(signedNote, verifiers);
  if (failedBy.length > 0) {
    return {
      checkpoint,
      signedBy: verifiedBy,
      failure: { code: 'BAD_SIGNATURE', message: `invalid checkpoint signature by ${failedBy.join(', ')}` },
    };
  }
  if (verifiedBy.length === 0) {
    return {
      checkpoint,
      signedBy: [],
      failure: { code: 'BAD_SIGNATURE', message: 'the checkpoint carries no signature by a trusted key' },
    };
  }
  if (expectedOrigin !== undefined && checkpoint.origin !== expectedOrigin) {
    return {
      checkpoint,
      signedBy: verifiedBy,
      failure: {
        code: 'ORIGIN_MISMATCH',
        message: `checkpoint is for ${JSON.stringify(checkpoint.origin)}, expected ${JSON.stringify(expectedOrigin)}`,
      },
    };
  }
  return { checkpoint, signedBy: verifiedBy };
}

function isAsyncIterable(source: ChainSource): source is AsyncIterable<string | Record<string, unknown>> {
  return typeof (source as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';
}

/** Feeds one item (a line or an entry) to the verifier. */
export function pushItem(verifier: ChainVerifier, item: string | Record<string, unknown>): boolean {
  return typeof item === 'string' ? verifier.pushLine(item) : verifier.pushEntry(item);
}

/**
 * Verifies a whole log and its anchors.
 *
 * Order of checks: the checkpoint is parsed and its signatures checked
 * first (its origin may be needed for the genesis check), then every entry,
 * then the checkpoint's size and root, then the trusted state. The first
 * failure is reported; a chain failure wins over an anchor failure.
 */
export async function verifyChainWith(
  suite: HashSuite,
  source: ChainSource,
  options: VerifyChainOptions = {},
): Promise<VerificationResult> {
  const prepared = await prepareAnchors(suite, options);
  const verifier = prepared.verifier;
  if (isAsyncIterable(source)) {
    for await (const item of source) if (!pushItem(verifier, item)) break;
  } else {
    for (const item of source) if (!pushItem(verifier, item)) break;
  }
  return applyAnchors(verifier, prepared, options.trustedState);
}

/**
 * Verifies JSONL bytes (a file, a socket, an HTTP body), streaming: every
 * line, a line that is not UTF-8, a torn tail (bytes after the last
 * newline), then the anchors.
 */
export async function verifyJsonlWith(
  suite: HashSuite,
  chunks: AsyncIterable<Uint8Array | string>,
  options: VerifyChainOptions = {},
): Promise<VerificationResult> {
  const prepared = await prepareAnchors(suite, options);
  const { verifier } = prepared;
  batches: for await (const batch of splitLineBatches(chunks)) {
    if (batch.kind === 'torn') {
      verifier.pushTornTail(batch.byteLength);
      break;
    }
    if (batch.kind === 'undecodable') {
      verifier.pushUndecodable();
      break;
    }
    for (const line of batch.lines) if (!verifier.pushLine(line)) break batches;
  }
  return applyAnchors(verifier, prepared, options.trustedState);
}

/** What {@link prepareAnchors} works out before the entries are read. */
export interface PreparedVerification {
  verifier: ChainVerifier;
  checkpoint: CheckpointOutcome | undefined;
}

/** Checks the checkpoint and builds a verifier that records the roots the anchors need. */
export async function prepareAnchors(suite: HashSuite, options: VerifyChainOptions): Promise<PreparedVerification> {
  const checkpoint =
    options.checkpoint === undefined ? undefined : await checkCheckpointWith(options.checkpoint, options.verifiers ?? [], options.origin);
  const trusted = options.trustedState;
  if (trusted !== undefined) validateTrustedState(trusted);
  const origin = options.origin ?? checkpoint?.checkpoint?.origin ?? trusted?.origin;
  const recordRootsAt: number[] = [];
  if (checkpoint?.checkpoint) recordRootsAt.push(checkpoint.checkpoint.size);
  if (trusted) recordRootsAt.push(trusted.size);
  const verifier = new ChainVerifier(suite, {
    scheme: options.scheme ?? 'jcs-sha256-v1',
    origin,
    mode: options.mode ?? 'strict',
    recordRootsAt,
  });
  return { verifier, checkpoint };
}

function validateTrustedState(state: TrustedState): void {
  if (
    typeof state !== 'object' ||
    state === null ||
    typeof state.origin !== 'string' ||
    !Number.isSafeInteger(state.size) ||
    state.size < 0 ||
    typeof state.root !== 'string' ||
    !/^[0-9a-f]{64}$/.test(state.root)
  ) {
    throw new AuditChainError('INVALID_ARGUMENT', 'trusted state must be {origin: string, size: integer >= 0, root: 64 hex}');
  }
}

/** Turns the chain result into the final result by checking the checkpoint and trusted state. */
export function applyAnchors(
  verifier: ChainVerifier,
  prepared: PreparedVerification,
  trusted: TrustedState | undefined,
): VerificationResult {
  const result = verifier.finish();
  if (!result.valid) return result;
  const fail = (code: VerifyErrorCode, message: string, firstInvalid: number | null = null): VerificationResult => ({
    ...result,
    valid: false,
    error_code: code,
    error_message: message,
    first_invalid_id: firstInvalid,
  });
  const outcome = prepared.checkpoint;
  if (outcome) {
    if (outcome.failure) return fail(outcome.failure.code, outcome.failure.message);
    const checkpoint = outcome.checkpoint!;
    if (result.origin !== null && checkpoint.origin !== result.origin) {
      return fail(
        'ORIGIN_MISMATCH',
        `checkpoint is for ${JSON.stringify(checkpoint.origin)}, the log for ${JSON.stringify(result.origin)}`,
      );
    }
    if (result.entries_verified < checkpoint.size) {
      return fail(
        'TRUNCATED',
        `the log has ${result.entries_verified} entries but the checkpoint covers ${checkpoint.size}`,
        result.entries_verified + 1,
      );
    }
    if (verifier.rootAt(checkpoint.size) !== checkpoint.root) {
      return fail('ROOT_MISMATCH', `the root of the first ${checkpoint.size} entries differs from the checkpoint's root`);
    }
  }
  if (trusted) {
    if (result.origin !== null && trusted.origin !== result.origin) {
      return fail(
        'ORIGIN_MISMATCH',
        `trusted state is for ${JSON.stringify(trusted.origin)}, the log for ${JSON.stringify(result.origin)}`,
      );
    }
    const checkpoint = outcome?.checkpoint;
    if (checkpoint && checkpoint.size < trusted.size) {
      return fail('ROLLBACK', `checkpoint size ${checkpoint.size} is older than the trusted size ${trusted.size}: a replayed checkpoint`);
    }
    if (checkpoint && checkpoint.size === trusted.size && checkpoint.root !== trusted.root) {
      return fail('FORK', `checkpoint and trusted state have size ${trusted.size} with different roots: the log forked`);
    }
    if (result.entries_verified < trusted.size) {
      return fail(
        'TRUNCATED',
        `the log has ${result.entries_verified} entries but ${trusted.size} were trusted before`,
        result.entries_verified + 1,
      );
    }
    if (verifier.rootAt(trusted.size) !== trusted.root) {
      return fail('FORK', `the first ${trusted.size} entries no longer have the trusted root: history was rewritten`);
    }
  }
  return result;
}

/** Options of `verifyCheckpoint`. */
export interface VerifyCheckpointOptions {
  verifiers: readonly NoteVerifier[];
  origin?: string | undefined;
  trustedState?: TrustedState | undefined;
  /** Proves that a checkpoint larger than the trusted state extends it. */
  consistencyProof?: readonly string[] | undefined;
}

/** The outcome of verifying a checkpoint on its own. */
export interface CheckpointVerification {
  valid: boolean;
  checkpoint: Checkpoint | null;
  signed_by: string[];
  error_code: VerifyErrorCode | null;
  error_message: string | null;
  warnings: string[];
}

/**
 * Verifies a signed checkpoint without the log: its form, its signatures,
 * its origin, and that it neither rolls back nor forks the trusted state.
 */
export async function verifyCheckpointWith(
  suite: HashSuite,
  note: string,
  options: VerifyCheckpointOptions,
): Promise<CheckpointVerification> {
  const outcome = await checkCheckpointWith(note, options.verifiers, options.origin);
  const base = { checkpoint: outcome.checkpoint ?? null, signed_by: outcome.signedBy, warnings: [] as string[] };
  const fail = (code: VerifyErrorCode, message: string): CheckpointVerification => ({
    ...base,
    valid: false,
    error_code: code,
    error_message: message,
  });
  if (outcome.failure) return fail(outcome.failure.code, outcome.failure.message);
  const checkpoint = outcome.checkpoint!;
  const trusted = options.trustedState;
  if (trusted) {
    validateTrustedState(trusted);
    if (trusted.origin !== checkpoint.origin) return fail('ORIGIN_MISMATCH', 'the trusted state is for another log');
    if (checkpoint.size < trusted.size)
      return fail('ROLLBACK', `checkpoint size ${checkpoint.size} is older than the trusted size ${trusted.size}`);
    if (checkpoint.size === trusted.size && checkpoint.root !== trusted.root)
      return fail('FORK', 'same size as the trusted state with another root');
    if (checkpoint.size > trusted.size) {
      if (options.consistencyProof === undefined) {
        base.warnings.push('no consistency proof given: that the checkpoint extends the trusted state was not checked');
      } else {
        const consistent = verifyConsistencyProofWith(suite, {
          first_size: trusted.size,
          second_size: checkpoint.size,
          first_root: trusted.root,
          second_root: checkpoint.root,
          proof: [...options.consistencyProof],
        });
        if (!consistent) return fail('FORK', 'the consistency proof does not connect the trusted state to the checkpoint');
      }
    }
  }
  return { ...base, valid: true, error_code: null, error_message: null };
}
