/**
 * @module postgresCredentialStore
 * The PostgreSQL `CredentialStore`, shared by every gateway node on one
 * database. Secrets are sealed with the configured key before they leave
 * the process. Each write is one statement that changes the row, raises
 * its revision (tombstones keep theirs, so a re-created credential
 * continues above it) and calls `pg_notify` with the auth event, so the
 * event is sent exactly when the change commits. `watch` reports this
 * handle's writes at once, and other handles' changes through the
 * {@link AuthEventBus}.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Scheduler } from '@switchyard/runtime';
import { type PgConnection, poolFor, runMigrations } from '@switchyard/runtime/postgres';
import { EventEmitter } from 'eventemitter3';
import type pg from 'pg';
import { type Credential, parseCredential } from '../credential.js';
import { type EncryptionKey, parseEncryptionKey } from '../encryption.js';
import { CredentialsError, RevisionConflict } from '../errors.js';
import type { CredentialStore, DeleteOptions, PutOptions, StoreChange, Unsubscribe } from '../store/credentialStore.js';
import { callEach } from '../util/callEach.js';
import type { AuthEventCorrelation } from './authEvent.js';
import { AuthEventBus, type AuthEventBusSettings, type RevisionState } from './authEventBus.js';
import { type PostgresRekeyOptions, type PostgresRekeyReport, rekeyCredentialRows } from './credentialRekey.js';
import { type CredentialRow, decodeRow, encodeRow } from './credentialRows.js';
import { CREDENTIALS_MIGRATIONS } from './schema.js';

/** Options of {@link PostgresCredentialStore.open}. */
export interface PostgresCredentialStoreOptions {
  /** Where the database is; the LISTEN connection always uses it. */
  connection: PgConnection;
  /** A shared pool for reads and writes; the store does not end it. */
  pool?: pg.Pool;
  /** Size of the store's own pool (default 5). */
  max?: number;
  /** Secrets are always encrypted: `key` seals every write, `previousKeys` may still be read during a key change. */
  encryption: { key: string | EncryptionKey; previousKeys?: readonly (string | EncryptionKey)[] };
  /** `cluster.node_id`: names this node in `origin.node_id`. */
  nodeId: string;
  /** The auth event bus (channel, de-duplication, reconciliation, LISTEN connection). */
  events?: AuthEventBusSettings;
  scheduler?: Scheduler;
}

const toKey = (key: string | EncryptionKey) => (typeof key === 'string' ? parseEncryptionKey(key) : key);

/** Fills the revision (and kind) the statement assigned into the event template `$6`, and sends it. */
const NOTIFY_WRITTEN = `
  SELECT revision, pg_notify($5, jsonb_set(jsonb_set($6::jsonb, '{mutation,revision}', to_jsonb(revision)),
    '{mutation,kind}', to_jsonb((CASE WHEN created_revision = revision THEN 'create' ELSE 'update' END)::text))::text)
  FROM written`;

const UPSERT = `
  INSERT INTO switchyard_credentials AS c (id, provider, revision, deleted, created_revision, record, secrets)
  VALUES ($1, $2, 1, false, 1, $3, $4)
  ON CONFLICT (id) DO UPDATE SET provider = EXCLUDED.provider, revision = c.revision + 1, deleted = false,
    created_revision = CASE WHEN c.deleted THEN c.revision + 1 ELSE c.created_revision END,
    record = EXCLUDED.record, secrets = EXCLUDED.secrets, updated_at = now()`;

const SQL = {
  put: `WITH written AS (${UPSERT} RETURNING revision, created_revision) ${NOTIFY_WRITTEN}`,
  create: `WITH written AS (${UPSERT} WHERE c.deleted RETURNING revision, created_revision) ${NOTIFY_WRITTEN}`,
  replace: `WITH written AS (
      UPDATE switchyard_credentials SET provider = $2, revision = revision + 1, record = $3, secrets = $4, updated_at = now()
      WHERE id = $1 AND NOT deleted AND revision = $7 RETURNING revision, created_revision) ${NOTIFY_WRITTEN}`,
  delete: (conditional: boolean) => `WITH removed AS (
      UPDATE switchyard_credentials SET deleted = true, revision = revision + 1, record = NULL, secrets = NULL, updated_at = now()
      WHERE id = $1 AND NOT deleted ${conditional ? 'AND revision = $4' : ''} RETURNING revision, provider)
    SELECT revision, pg_notify($2, jsonb_set(jsonb_set($3::jsonb, '{mutation,revision}', to_jsonb(revision)),
      '{subject,provider}', to_jsonb(provider))::text)
    FROM removed`,
};

/**
 * Credentials in PostgreSQL, encrypted at rest, with change events to every node.
 *
 * @example
 * ```ts
 * import { CredentialManager } from '@switchyard/credentials';
 * import { PostgresCredentialStore, PostgresQuotaStore, PostgresRefreshLock } from '@switchyard/credentials/postgres';
 *
 * const connection = 'postgres://postgres@127.0.0.1/gateway';
 * const store = await PostgresCredentialStore.open({ connection, nodeId: 'node-a', encryption: { key: process.env.AUTH_KEY! } });
 * const manager = new CredentialManager({
 *   store,
 *   quotaStore: await PostgresQuotaStore.open({ connection }),
 *   refreshLock: await PostgresRefreshLock.open({ connection }),
 * });
 * await manager.start(); // credentials added on any node now reach this one
 * ```
 */
export class PostgresCredentialStore implements CredentialStore {
  readonly backend = 'postgres' as const;
  private readonly changes = new EventEmitter<{ change: [StoreChange] }>();
  private readonly correlation = new AsyncLocalStorage<AuthEventCorrelation>();
  private eventBus: AuthEventBus | undefined;
  private closed = false;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly ownsPool: boolean,
    private key: EncryptionKey,
    private keys: readonly EncryptionKey[],
  ) {}

  /** Connects, applies the migrations and starts the event bus. */
  static async open(options: PostgresCredentialStoreOptions): Promise<PostgresCredentialStore> {
    if (!options.encryption?.key) {
      throw new CredentialsError('invalid_config', 'the PostgreSQL credential store needs auth.encryption.key', {
        field: 'auth.encryption.key',
      });
    }
    const key = toKey(options.encryption.key);
    const keys = [key, ...(options.encryption.previousKeys ?? []).map(toKey)];
    const { pool, owned } = poolFor(options.connection, options.pool, options.max ?? 5);
    const store = new PostgresCredentialStore(pool, owned, key, keys);
    try {
      await runMigrations(pool, 'credentials', CREDENTIALS_MIGRATIONS);
      store.eventBus = await AuthEventBus.start({
        ...options.events,
        connection: options.connection,
        pool,
        nodeId: options.nodeId,
        backendMode: 'postgres',
        source: { revisionOf: (id) => store.revisionOf(id), revisions: () => store.revisions() },
        onChange: (change) => store.emit(change),
        ...(options.scheduler ? { scheduler: options.scheduler } : {}),
      });
    } catch (error) {
      await store.close();
      throw error instanceof CredentialsError ? error : new CredentialsError('store_failed', (error as Error).message, { cause: error });
    }
    return store;
  }

  /** The auth event bus: counters, `config.reload`, reconciliation. */
  get bus(): AuthEventBus {
    if (!this.eventBus) throw new CredentialsError('closed', 'the credential store is closed');
    return this.eventBus;
  }

  /**
   * Runs `task` with `correlation` attached to every write it makes (the
   * events' `correlation` and `mutation.reason`).
   *
   * @example
   * ```ts
   * await store.withCorrelation({ request_id: 'req-7', actor: 'admin', reason: 'management api' }, () => manager.add(input));
   * ```
   */
  withCorrelation<T>(correlation: AuthEventCorrelation, task: () => T): T {
    return this.correlation.run(correlation, task);
  }

  async list(): Promise<Credential[]> {
    const { rows } = await this.query<CredentialRow>(
      'SELECT id, provider, revision, record, secrets FROM switchyard_credentials WHERE NOT deleted',
    );
    return rows.map((row) => decodeRow(row, this.keys)).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async get(id: string): Promise<Credential | undefined> {
    const { rows } = await this.query<CredentialRow>(
      'SELECT id, provider, revision, record, secrets FROM switchyard_credentials WHERE id = $1 AND NOT deleted',
      [id],
    );
    return rows[0] && decodeRow(rows[0], this.keys);
  }

  async put(credential: Credential, options: PutOptions = {}): Promise<Credential> {
    const parsed = parseCredential({ ...structuredClone(credential), revision: 0 });
    const { record, secrets } = encodeRow(parsed, this.key);
    const event = this.bus.changeEvent('auth.upsert', parsed.id, parsed.provider, this.correlation.getStore());
    const params: unknown[] = [parsed.id, parsed.provider, record, secrets, this.bus.channel, event];
    const expected = options.expectedRevision;
    const sql = expected === undefined ? SQL.put : expected === null ? SQL.create : SQL.replace;
    if (typeof expected === 'number') params.push(expected);
    const { rows } = await this.query<{ revision: string }>(sql, params);
    if (rows.length === 0) throw new RevisionConflict(parsed.id, expected ?? null, await this.currentRevision(parsed.id));
    const revision = Number(rows[0]!.revision);
    this.bus.recordLocal(parsed.id, { revision, deleted: false });
    this.emit({ type: 'auth.upsert', id: parsed.id, revision, origin: 'local' });
    return { ...parsed, revision };
  }

  async delete(id: string, options: DeleteOptions = {}): Promise<boolean> {
    const event = this.bus.changeEvent('auth.delete', id, 'unknown', this.correlation.getStore());
    const conditional = options.expectedRevision !== undefined;
    const params: unknown[] = [id, this.bus.channel, event, ...(conditional ? [options.expectedRevision] : [])];
    const { rows } = await this.query<{ revision: string }>(SQL.delete(conditional), params);
    if (rows.length === 0) {
      if (!conditional) return false;
      throw new RevisionConflict(id, options.expectedRevision!, await this.currentRevision(id));
    }
    const revision = Number(rows[0]!.revision);
    this.bus.recordLocal(id, { revision, deleted: true });
    this.emit({ type: 'auth.delete', id, revision, origin: 'local' });
    return true;
  }

  /** Id of the key writes are sealed with. */
  get keyId(): string {
    return this.key.id;
  }

  /**
   * Moves every credential to `newKey` while other nodes keep serving, and
   * seals this handle's writes with it from then on. It opens every row
   * first (with this handle's keys and `newKey`) and writes nothing if one
   * cannot be opened, naming it. Then it re-seals rows in batches, each a
   * transaction holding row locks, so a node's concurrent write (an OAuth
   * refresh) is never lost nor overwritten with older content. Only the
   * ciphertext changes: revisions stay, and no auth event is sent. Rows
   * already under `newKey` are skipped, so after an interruption running
   * it again finishes the job. Other nodes need `newKey` as their key (or
   * in `previousKeys`) to read the moved rows.
   *
   * @example
   * ```ts
   * const store = await PostgresCredentialStore.open({ connection, nodeId: 'rekey', encryption: { key: oldKey } });
   * const report = await store.rekey(newKey, { onProgress: (p) => console.log(`${p.rekeyed}/${p.pending}`) });
   * console.log(`${report.rekeyed} credentials now under key ${report.key_id}`);
   * ```
   */
  async rekey(newKey: string | EncryptionKey, options: PostgresRekeyOptions = {}): Promise<PostgresRekeyReport> {
    if (this.closed) throw new CredentialsError('closed', 'the credential store is closed');
    const key = toKey(newKey);
    const report = await rekeyCredentialRows(this.pool, this.keys, key, options);
    this.key = key;
    this.keys = [key, ...this.keys.filter((k) => k.id !== key.id)];
    return report;
  }

  watch(listener: (change: StoreChange) => void): Unsubscribe {
    this.changes.on('change', listener);
    return () => this.changes.off('change', listener);
  }

  /** Stops the bus, and ends the pool when the store made it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.changes.removeAllListeners();
    await this.eventBus?.close();
    this.eventBus = undefined;
    if (this.ownsPool) await this.pool.end();
  }

  private async revisionOf(id: string): Promise<RevisionState | undefined> {
    const { rows } = await this.query<{ revision: string; deleted: boolean }>(
      'SELECT revision, deleted FROM switchyard_credentials WHERE id = $1',
      [id],
    );
    return rows[0] && { revision: Number(rows[0].revision), deleted: rows[0].deleted };
  }

  private async revisions(): Promise<Map<string, RevisionState>> {
    const { rows } = await this.query<{ id: string; revision: string; deleted: boolean }>(
      'SELECT id, revision, deleted FROM switchyard_credentials',
    );
    return new Map(rows.map((row) => [row.id, { revision: Number(row.revision), deleted: row.deleted }]));
  }

  /** The live revision for a conflict's message; null when absent or deleted. */
  private async currentRevision(id: string): Promise<number | null> {
    const state = await this.revisionOf(id);
    return state && !state.deleted ? state.revision : null;
  }

  private async query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>> {
    if (this.closed) throw new CredentialsError('closed', 'the credential store is closed');
    try {
      return await this.pool.query<R>(sql, params);
    } catch (error) {
      throw new CredentialsError('store_failed', `credential store: ${(error as Error).message}`, { cause: error });
    }
  }

  private emit(change: StoreChange): void {
    callEach(this.changes.listeners('change'), change);
  }
}
