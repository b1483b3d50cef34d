/**
 * @module postgresSignInDirectory
 * The cluster's `SignInDirectory`: one row per device sign-in in
 * `switchyard_sign_ins`, written by the node that runs it, read by any.
 * A cancel from another node sets the row's `cancel_requested` and, in the
 * same statement, sends the sign-in id with `pg_notify` on the directory's
 * channel; every node LISTENs there and the owner aborts the flow. A
 * notification lost while the owner's LISTEN connection was away is made up
 * for by the owner's own check of the flag (`SignInSessions`,
 * `cancelCheckIntervalMs`).
 */
import type { PgListener } from '@switchyard/runtime/postgres';
import type pg from 'pg';
import { CredentialsError } from '../errors.js';
import { INTERRUPTED_ERROR, type SignInDirectory, type SignInRecord, type SignInRecordWrite } from '../oauth/signInDirectory.js';
import type { SignInSession } from '../oauth/signInSessions.js';
import { type ListeningAdapterOptions, openListeningAdapter } from './listeningAdapter.js';

/** The default NOTIFY channel of cancel requests. */
export const DEFAULT_SIGN_IN_CHANNEL = 'svc_signin_events_v1';

/**
 * Options of {@link PostgresSignInDirectory.open}: `connection` (needed to
 * LISTEN, which is the default when it is given), or a shared `pool` the
 * directory does not end, `max` (its own pool's size, default 2),
 * `applicationName` of the LISTEN connection (default
 * `switchyard-sign-ins`), `backoff` of its reconnections, and:
 */
export interface PostgresSignInDirectoryOptions extends ListeningAdapterOptions {
  /** NOTIFY channel of cancel requests (default `svc_signin_events_v1`). Channels are database-wide: tests use one per file. */
  channel?: string;
  /** The LISTEN connection dropped, or a reconnection failed. */
  onError?: (error: Error) => void;
}

interface SignInRow {
  node_id: string;
  status: SignInSession;
  cancel_requested: boolean;
  forget_at: Date;
}

const SQL = {
  put: `INSERT INTO switchyard_sign_ins (id, node_id, state, status, forget_at) VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (id) DO UPDATE SET node_id = EXCLUDED.node_id, state = EXCLUDED.state, status = EXCLUDED.status,
      forget_at = EXCLUDED.forget_at, updated_at = now()`,
  get: 'SELECT node_id, status, cancel_requested, forget_at FROM switchyard_sign_ins WHERE id = $1 AND forget_at > $2',
  // The flag and the notification commit together: the owner never hears of a request it cannot then read.
  requestCancel: `WITH flagged AS (
      UPDATE switchyard_sign_ins SET cancel_requested = true, updated_at = now()
      WHERE id = $1 AND state = 'pending' AND forget_at > $2 RETURNING id)
    SELECT pg_notify($3, id) FROM flagged`,
  interrupt: `UPDATE switchyard_sign_ins SET state = 'failed', forget_at = $3, updated_at = now(),
      status = status || jsonb_build_object('state', 'failed', 'finished_at', $2::text, 'error', $4::jsonb)
    WHERE node_id = $1 AND state = 'pending'`,
  prune: 'DELETE FROM switchyard_sign_ins WHERE forget_at <= $1',
};

/**
 * Device sign-ins visible, and cancellable, from every node on one database.
 *
 * @example
 * ```ts
 * import { PostgresSignInDirectory } from '@switchyard/credentials/postgres';
 * const signInDirectory = await PostgresSignInDirectory.open({ connection: 'postgres://postgres@127.0.0.1/gateway' });
 * const manager = new CredentialManager({ store, signInDirectory, nodeId: 'node-a' });
 * await manager.start(); // marks this node's sign-ins from before a restart as interrupted
 * ```
 */
export class PostgresSignInDirectory implements SignInDirectory {
  private readonly handlers = new Set<(id: string) => void>();
  private listener: PgListener | undefined;
  private closed = false;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly ownsPool: boolean,
    readonly channel: string,
  ) {}

  /** Connects, applies the migrations and, unless told not to, LISTENs for cancel requests. */
  static async open(options: PostgresSignInDirectoryOptions): Promise<PostgresSignInDirectory> {
    const channel = options.channel ?? DEFAULT_SIGN_IN_CHANNEL;
    const { adapter: directory, listener } = await openListeningAdapter(options, {
      name: 'PostgresSignInDirectory',
      listensFor: 'cancel requests',
      defaultMax: 2,
      defaultApplicationName: 'switchyard-sign-ins',
      channel,
      make: (pool, owned) => new PostgresSignInDirectory(pool, owned, channel),
      onNotification: (directory, payload) => {
        for (const handler of [...directory.handlers]) handler(payload);
      },
      onError: options.onError,
    });
    directory.listener = listener;
    return directory;
  }

  /** The LISTEN connection (its `connected`, `reconnects` and `backendPid`), when the directory listens. */
  get listenerState(): Pick<PgListener, 'connected' | 'reconnects' | 'backendPid'> | undefined {
    return this.listener;
  }

  async put(record: SignInRecordWrite): Promise<void> {
    const { node_id, forget_at, ...status } = record;
    await this.query(SQL.put, [record.id, node_id, record.state, JSON.stringify(status), forget_at]);
  }

  async get(id: string, now: number): Promise<SignInRecord | undefined> {
    const { rows } = await this.query<SignInRow>(SQL.get, [id, new Date(now).toISOString()]);
    const row = rows[0];
    if (!row) return undefined;
    return { ...row.status, node_id: row.node_id, cancel_requested: row.cancel_requested, forget_at: row.forget_at.toISOString() };
  }

  async requestCancel(id: string, now: number): Promise<SignInRecord | undefined> {
    await this.query(SQL.requestCancel, [id, new Date(now).toISOString(), this.channel]);
    return this.get(id, now);
  }

  onCancelRequest(handler: (id: string) => void): () => void {
    // A wrapper per subscription, so one function subscribed twice is two subscriptions.
    const entry = (id: string) => handler(id);
    this.handlers.add(entry);
    return () => this.handlers.delete(entry);
  }

  async interrupt(nodeId: string, finishedAt: string, forgetAt: string): Promise<number> {
    const result = await this.query(SQL.interrupt, [nodeId, finishedAt, forgetAt, JSON.stringify(INTERRUPTED_ERROR)]);
    return result.rowCount ?? 0;
  }

  async prune(now: number): Promise<void> {
    await this.query(SQL.prune, [new Date(now).toISOString()]);
  }

  /** Stops listening; ends the pool when the directory made it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.handlers.clear();
    await this.listener?.close();
    if (this.ownsPool) await this.pool.end();
  }

  private async query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    if (this.closed) throw new CredentialsError('closed', 'the sign-in directory is closed');
    try {
      return await this.pool.query<R>(text, values);
    } catch (error) {
      throw new CredentialsError('store_failed', `sign-in directory: ${(error as Error).message}`, { cause: error });
    }
  }
}
