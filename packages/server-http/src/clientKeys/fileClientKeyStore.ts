/**
 * @module fileClientKeyStore
 * One gateway's client keys in `auth-dir/.client-keys.json` (mode 0600,
 * replaced atomically through runtime's /fs write): the records (secret
 * digests, never secrets), when each key was last used, and each budget's
 * use in its current period, so a restart keeps keys and spend alike.
 *
 * The records are large (10,000 keys take about 5 MB) and change rarely,
 * while last-used times and budget use change with every request. So the
 * key file is rewritten when a key is created, changed or revoked, and for
 * last-used times only every few minutes (and at close); budget use, which
 * must survive a crash, goes at each flush to a small file of its own beside
 * it (`.client-keys.budgets.json`, also 0600 and atomic). Rewriting every
 * record at each flush cost the data plane about 20 µs per request with
 * 10,000 keys in use (docs/benchmarks.md).
 */
import { z } from 'zod';
import { writeFileAtomically } from '../gateway/config/persist.js';
import { CoalescedWrites, readStateFile, type StateFileUnreadable } from '../gateway/stateFile.js';
import { type ClientKeyRecord, ClientKeyRecordSchema } from './clientKeyRecord.js';
import { type ClientKeyStore, LocalBudgetLedger } from './clientKeyStore.js';

/** The file in `auth-dir` where a gateway outside a cluster keeps its client keys. */
export const CLIENT_KEYS_FILE = '.client-keys.json';

/** 10,000 keys take about 5 MB; a file far larger is not ours. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** How often last-used times alone rewrite the key file (default): a crash loses at most this much of them. */
export const LAST_USED_WRITE_INTERVAL_MS = 300_000;

/** The budget file beside a key file: `.client-keys.json` → `.client-keys.budgets.json`. */
export function budgetFileOf(path: string): string {
  return path.endsWith('.json') ? `${path.slice(0, -'.json'.length)}.budgets.json` : `${path}.budgets`;
}

/** Options of {@link FileClientKeyStore.open}. */
export interface FileClientKeyStoreOptions {
  /** Last-used times rewrite the key file at most this often (default 5 minutes; 0: at each flush). */
  lastUsedWriteIntervalMs?: number;
  clock?: { now(): number };
}

const BudgetUseSchema = z.record(z.string(), z.object({ period: z.string(), used: z.number().nonnegative() }));

const FileSchema = z.object({
  format_version: z.literal(1),
  keys: z.array(ClientKeyRecordSchema),
  budget_use: BudgetUseSchema,
});

const BudgetFileSchema = z.object({ format_version: z.literal(1), budget_use: BudgetUseSchema });

/** The file could not be read as client keys: the gateway refuses to start rather than drop every key (or revive a revoked one). */
export class ClientKeysUnreadableError extends Error {
  override name = 'ClientKeysUnreadableError';
  readonly code = 'client_keys_unreadable';
}

/**
 * Client keys and budget use in one JSON file.
 *
 * @example
 * ```ts
 * const store = await FileClientKeyStore.open('./auths/.client-keys.json');
 * const guard = await ClientKeyGuard.open({ store, ledger: store.ledger, clock });
 * ```
 */
export class FileClientKeyStore implements ClientKeyStore {
  /** Budget use, counted in this process and written to the budget file. */
  readonly ledger = new LocalBudgetLedger();
  /** Where budget use is written at each flush. */
  readonly budgetPath: string;
  private readonly records = new Map<string, ClientKeyRecord>();
  private writtenLedgerVersion = 0;
  /** Last-used times learnt since the key file was last written. */
  private lastUsedPending = false;
  private keysWrittenAt: number;
  private readonly lastUsedIntervalMs: number;
  private readonly clock: { now(): number };
  private readonly keyWrites = new CoalescedWrites(async () => {
    this.lastUsedPending = false;
    this.keysWrittenAt = this.clock.now();
    // The budget use rides along, so the key file alone is a consistent (if older) copy.
    const body = { format_version: 1, keys: [...this.records.values()], budget_use: this.ledger.snapshot() };
    await writeFileAtomically(this.path, `${JSON.stringify(body)}\n`, { mode: 0o600 });
  });
  private readonly budgetWrites = new CoalescedWrites(async () => {
    const ledgerVersion = this.ledger.version;
    // `JSON.stringify({ format_version: 1, budget_use: snapshot })`, from the ledger's kept text of unchanged keys.
    await writeFileAtomically(this.budgetPath, `{"format_version":1,"budget_use":${this.ledger.snapshotJson()}}\n`, { mode: 0o600 });
    this.writtenLedgerVersion = ledgerVersion;
  });

  private constructor(
    readonly path: string,
    options: FileClientKeyStoreOptions,
  ) {
    this.budgetPath = budgetFileOf(path);
    this.clock = options.clock ?? Date;
    this.lastUsedIntervalMs = options.lastUsedWriteIntervalMs ?? LAST_USED_WRITE_INTERVAL_MS;
    this.keysWrittenAt = this.clock.now();
  }

  /** Reads the files (missing ones are no keys and no use). */
  static async open(path: string, options: FileClientKeyStoreOptions = {}): Promise<FileClientKeyStore> {
    const store = new FileClientKeyStore(path, options);
    await store.read();
    return store;
  }

  async load(): Promise<ClientKeyRecord[]> {
    return [...this.records.values()].map((record) => ({ ...record }));
  }

  put(record: ClientKeyRecord): Promise<void> {
    this.records.set(record.id, { ...record });
    return this.keyWrites.persist();
  }

  /** Keeps the times in memory; they reach the key file every few minutes, with a key's change, or at close. */
  recordLastUsed(lastUsed: ReadonlyMap<string, string>): Promise<void> {
    for (const [id, at] of lastUsed) {
      const record = this.records.get(id);
      if (record) record.last_used_at = at;
    }
    if (lastUsed.size > 0) this.lastUsedPending = true;
    const writes: Promise<void>[] = [];
    if (this.ledger.version !== this.writtenLedgerVersion) writes.push(this.budgetWrites.persist());
    if (this.lastUsedPending && this.clock.now() - this.keysWrittenAt >= this.lastUsedIntervalMs) writes.push(this.keyWrites.persist());
    return writes.length === 0 ? this.budgetWrites.settled : Promise.all(writes).then(() => undefined);
  }

  /** Writes what is pending (last-used times, budget use) and waits for every write. */
  async close(): Promise<void> {
    const writes = [this.keyWrites.settled, this.budgetWrites.settled];
    if (this.lastUsedPending) writes.push(this.keyWrites.persist().catch(() => undefined));
    if (this.ledger.version !== this.writtenLedgerVersion) writes.push(this.budgetWrites.persist().catch(() => undefined));
    await Promise.all(writes);
  }

  private async read(): Promise<void> {
    const keys = await this.readFile(this.path, FileSchema, 'it is not a client-keys file');
    if (keys === undefined) return;
    for (const record of keys.keys) this.records.set(record.id, record);
    this.ledger.restore(keys.budget_use);
    // Written at each flush, it is the newer count of the two (restore keeps the larger of a period's counts).
    const budgets = await this.readFile(this.budgetPath, BudgetFileSchema, 'it is not a client-key budget file');
    if (budgets) this.ledger.restore(budgets.budget_use);
    this.writtenLedgerVersion = this.ledger.version;
  }

  private async readFile<T>(path: string, schema: z.ZodType<T>, notOurs: string): Promise<T | undefined> {
    let text: string | undefined;
    try {
      text = await readStateFile(path, MAX_FILE_BYTES);
    } catch (error) {
      throw this.unreadable(path, (error as StateFileUnreadable).reason, (error as Error).cause);
    }
    if (text === undefined) return undefined;
    try {
      return schema.parse(JSON.parse(text));
    } catch (error) {
      throw this.unreadable(path, notOurs, error);
    }
  }

  private unreadable(path: string, reason: string, cause?: unknown): ClientKeysUnreadableError {
    return new ClientKeysUnreadableError(
      `cannot read ${path} (${reason}). It holds the gateway's client keys (revoked ones too) or their budget use; restore it from a backup, or move it away to start with no runtime keys (or no budget spent)`,
      { cause },
    );
  }
}
