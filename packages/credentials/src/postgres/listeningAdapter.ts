/**
 * @module listeningAdapter
 * How the package's PostgreSQL adapters that announce on a NOTIFY channel
 * (the quota store, the sign-in directory) open: check the connection
 * settings, make or take the pool, apply the migrations, and LISTEN when
 * asked, closing what was opened if any step fails.
 */
import { type PgConnection, PgListener, poolFor, type ReconnectBackoff, runMigrations } from '@switchyard/runtime/postgres';
import type pg from 'pg';
import { CredentialsError } from '../errors.js';
import { CREDENTIALS_MIGRATIONS } from './schema.js';

/** The connection options such an adapter takes. */
export interface ListeningAdapterOptions {
  connection?: PgConnection | undefined;
  pool?: pg.Pool | undefined;
  max?: number | undefined;
  /** Default: true when `connection` is given (the LISTEN connection needs it). */
  listen?: boolean | undefined;
  applicationName?: string | undefined;
  backoff?: ReconnectBackoff | undefined;
}

/** What one adapter says about itself. */
export interface ListeningAdapterSpec<A> {
  /** Its class name, for the error without a connection. */
  name: string;
  /** What it listens for, for the error without a connection to listen on. */
  listensFor: string;
  defaultMax: number;
  defaultApplicationName: string;
  channel: string;
  make(pool: pg.Pool, owned: boolean): A;
  onNotification(adapter: A, payload: string): void;
  onError?: ((error: Error) => void) | undefined;
}

/**
 * Opens an adapter; answers it with its listener (undefined when it does not listen).
 *
 * @example
 * ```ts
 * const { adapter, listener } = await openListeningAdapter(options, { name: 'MyStore', listensFor: 'changes', ... });
 * ```
 */
export async function openListeningAdapter<A extends { close(): Promise<void> }>(
  options: ListeningAdapterOptions,
  spec: ListeningAdapterSpec<A>,
): Promise<{ adapter: A; listener: PgListener | undefined }> {
  if (!options.pool && !options.connection) {
    throw new CredentialsError('invalid_config', `${spec.name} needs a connection or a pool`, { field: 'connection' });
  }
  const listen = options.listen ?? options.connection !== undefined;
  if (listen && !options.connection) {
    throw new CredentialsError('invalid_config', `listening for ${spec.listensFor} needs a connection`, { field: 'connection' });
  }
  const { pool, owned } = poolFor(options.connection ?? {}, options.pool, options.max ?? spec.defaultMax);
  const adapter = spec.make(pool, owned);
  try {
    await runMigrations(pool, 'credentials', CREDENTIALS_MIGRATIONS);
    const listener = listen
      ? await PgListener.start({
          connection: options.connection!,
          channels: [spec.channel],
          applicationName: options.applicationName ?? spec.defaultApplicationName,
          onNotification: (_channel, payload) => spec.onNotification(adapter, payload),
          ...(spec.onError ? { onError: spec.onError } : {}),
          ...(options.backoff ? { backoff: options.backoff } : {}),
        })
      : undefined;
    return { adapter, listener };
  } catch (error) {
    await adapter.close();
    throw new CredentialsError('store_failed', (error as Error).message, { cause: error });
  }
}
