/**
 * @module auditTrail
 * The workflow's audit trail: one audit-chain log per feature (origin
 * `workflow:<repo name>/<feature_slug>`), plus the `_governance` chain for
 * rule changes. Entries are sealed inside the store's transaction, next to
 * the change they record. Reading, verifying, exporting and querying live
 * here too.
 */
import {
  type AuditEntry,
  AuditLog,
  type EntryBuilder,
  type EntryFields,
  type NoteVerifier,
  type SealedEntry,
  type TrustedState,
} from '@switchyard/audit-chain';
import type { AuditAction, AuditTrailEntry, AuditVerification } from '../domain/model.js';
import { InvalidArgumentError } from '../errors.js';
import type { WorkflowStore, WorkflowTx } from '../store/workflowStore.js';
import type { Clock } from '../util/clock.js';
import { type AuditQueryOptions, type AuditQueryRow, runQuery } from './auditQuery.js';

/** The chain that records governance rule changes. */
export const GOVERNANCE_CHAIN = '_governance';

/** What a caller records; the chain adds id, timestamp, prev_hash and hash. */
export interface AuditRecord {
  feature_slug: string | null;
  wp_sequence: number | null;
  actor: string;
  transition: string;
  evidence_refs: number[];
  action: AuditAction;
  forced?: boolean;
  detail?: Record<string, unknown>;
}

/** Verification result: the four fields plus the chain's diagnostics. */
export interface TrailVerification extends AuditVerification {
  error_code: string | null;
  root: string;
  origin: string;
}

/**
 * Checks a repository name can be part of an origin.
 *
 * @example
 * ```ts
 * auditOrigin('my-repo', '001-login'); // 'workflow:my-repo/001-login'
 * ```
 */
export function auditOrigin(repoName: string, chain: string): string {
  return `workflow:${repoName}/${chain}`;
}

/** Reads and writes the per-feature chains of one store. */
export class AuditTrail {
  private readonly logs = new Map<string, AuditLog>();

  constructor(
    private readonly store: WorkflowStore,
    readonly repoName: string,
    private readonly clock: Clock,
  ) {
    if (!/^[^\s/\\][^\r\n]*$/.test(repoName) || repoName.trim() !== repoName || repoName.includes('/')) {
      throw new InvalidArgumentError('repoName', 'must be one line without slashes or surrounding space');
    }
  }

  /** The origin of a chain. */
  origin(chain: string): string {
    return auditOrigin(this.repoName, chain);
  }

  /** audit-chain's `AuditLog` over one chain (for proofs, checkpoints, verification). */
  log(chain: string): AuditLog {
    let log = this.logs.get(chain);
    if (!log) {
      log = new AuditLog(this.store.auditStore(chain), { origin: this.origin(chain), now: () => new Date(this.clock.now()) });
      this.logs.set(chain, log);
    }
    return log;
  }

  /** A builder sealing `records` after whatever head the store holds when it calls back. */
  builder(chain: string, records: readonly AuditRecord[]): EntryBuilder {
    const log = this.log(chain);
    const timestamp = new Date(this.clock.now()).toISOString();
    // A JSON round trip drops undefined members and proves every value is JSON before it is hashed.
    const fields = records.map((r) => JSON.parse(JSON.stringify(r)) as EntryFields);
    return (head) => log.seal(head, fields, timestamp);
  }

  /** Appends one record to `chain` inside the caller's transaction; resolves with the sealed entry. */
  async append(tx: Pick<WorkflowTx, 'appendAudit'>, chain: string, record: AuditRecord): Promise<AuditEntry> {
    const [sealed] = await tx.appendAudit(chain, this.builder(chain, [record]));
    return sealed!.entry;
  }

  /** Entries of a chain, oldest first; `since` is an RFC 3339 lower bound, `limit` keeps the newest. */
  async entries(chain: string, options: { since?: string; limit?: number } = {}): Promise<AuditTrailEntry[]> {
    const out: AuditTrailEntry[] = [];
    const since = options.since === undefined ? undefined : Date.parse(options.since);
    if (since !== undefined && Number.isNaN(since)) throw new InvalidArgumentError('since', `not a date: ${JSON.stringify(options.since)}`);
    for await (const entry of this.store.auditStore(chain).read()) {
      if (since !== undefined && Date.parse(entry.timestamp) < since) continue;
      out.push(entry as unknown as AuditTrailEntry);
    }
    return options.limit !== undefined ? out.slice(Math.max(0, out.length - options.limit)) : out;
  }

  /**
   * Verifies a chain: links, hashes, canonical form and the genesis bound to its origin; and,
   * when given, against a signed checkpoint and a trusted state held outside the store, which
   * catch what the chain alone cannot: a truncated chain, or one re-hashed from the start.
   */
  async verify(
    chain: string,
    anchors: { checkpoint?: string; verifiers?: readonly NoteVerifier[]; trustedState?: TrustedState } = {},
  ): Promise<TrailVerification> {
    const result = await this.log(chain).verify(anchors);
    return {
      valid: result.valid,
      entries_verified: result.entries_verified,
      first_invalid_id: result.first_invalid_id,
      error_message: result.error_message,
      error_code: result.error_code,
      root: result.root,
      origin: this.origin(chain),
    };
  }

  /** The chain as JSONL (one canonical entry per line), accepted by `audit-chain verify --origin <origin>`. */
  async exportJsonl(chain: string): Promise<string> {
    let text = '';
    const store = this.store.auditStore(chain);
    const source = store.lines ? store.lines() : undefined;
    if (!source) throw new InvalidArgumentError('chain', 'the store cannot export verbatim lines');
    for await (const line of source) text += `${line}\n`;
    return text;
  }

  /** Runs an `audit:query` over one chain, or over every feature chain when `chain` is undefined. */
  async query(chain: string | undefined, options: AuditQueryOptions): Promise<AuditQueryRow[]> {
    const chains = chain === undefined ? (await this.store.auditChains()).filter((c) => !c.startsWith('_')) : [chain];
    const entries: Record<string, unknown>[] = [];
    for (const c of chains) entries.push(...((await this.entries(c)) as unknown as Record<string, unknown>[]));
    return runQuery(entries, options);
  }
}

export type { SealedEntry };
