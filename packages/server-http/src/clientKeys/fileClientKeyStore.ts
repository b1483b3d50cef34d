/**
 * @module fileClientKeyStore
 * One gateway's client keys in `auth-dir/.client-keys.json` (mode 0600,
 * replaced atomically through runtime's /fs write): the records (secret
 * digests, never secrets), when each key was last used, and each budget's
 * use in its current period, so a restart keeps keys and spend alike.
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

const FileSchema = z.object({
  format_version: z.literal(1),
  keys: z.array(ClientKeyRecordSchema),
  budget_use: z.record(z.string(), z.object({ period: z.string(), used: z.number().nonnegative() })),
});

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
  /** Budget use, counted in this process and written with the keys. */
  readonly ledger = new LocalBudgetLedger();
  private readonly records = new Map<string, ClientKeyRecord>();
  private writtenLedgerVersion = 0;
  private readonly writes = new CoalescedWrites(async () => {
    const ledgerVersion = this.ledger.version;
    const body = { format_version: 1, keys: [...this.records.values()], budget_use: this.ledger.snapshot() };
    await writeFileAtomically(this.path, `${JSON.stringify(body)}\n`, { mode: 0o600 });
    this.writtenLedgerVersion = ledgerVersion;
  });

  private constructor(readonly path: string) {}

  /** Reads the file (a missing one is no keys). */
  static async open(path: string): Promise<FileClientKeyStore> {
    const store = new FileClientKeyStore(path);
    await store.read();
    return store;
  }

  async load(): Promise<ClientKeyRecord[]> {
    return [...this.records.values()].map((record) => ({ ...record }));
  }

  put(record: ClientKeyRecord): Promise<void> {
    this.records.set(record.id, { ...record });
    return this.writes.persist();
  }

  recordLastUsed(lastUsed: ReadonlyMap<string, string>): Promise<void> {
    for (const [id, at] of lastUsed) {
      const record = this.records.get(id);
      if (record) record.last_used_at = at;
    }
    if (lastUsed.size === 0 && this.ledger.version === this.writtenLedgerVersion) return this.writes.settled;
    return this.writes.persist();
  }

  async close(): Promise<void> {
    await this.writes.settled;
  }

  private async read(): Promise<void> {
    let text: string | undefined;
    try {
      text = await readStateFile(this.path, MAX_FILE_BYTES);
    } catch (error) {
      throw this.unreadable((error as StateFileUnreadable).reason, (error as Error).cause);
    }
    if (text === undefined) return;
    let parsed: z.infer<typeof FileSchema>;
    try {
      parsed = FileSchema.parse(JSON.parse(text));
    } catch (error) {
      throw this.unreadable('it is not a client-keys file', error);
    }
    for (const record of parsed.keys) this.records.set(record.id, record);
    this.ledger.restore(parsed.budget_use);
    this.writtenLedgerVersion = this.ledger.version;
  }

  private unreadable(reason: string, cause?: unknown): ClientKeysUnreadableError {
    return new ClientKeysUnreadableError(
      `cannot read ${this.path} (${reason}). It holds the gateway's client keys (revoked ones too); restore it from a backup, or move it away to start with no runtime keys`,
      { cause },
    );
  }
}
