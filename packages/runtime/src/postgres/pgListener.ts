/**
 * @module pgListener
 * One dedicated PostgreSQL connection that LISTENs to a few channels and
 * survives the server going away. When the connection drops (a restart, a
 * failover, `pg_terminate_backend`, a dead network found by the ping), it
 * reconnects with capped exponential backoff, LISTENs again, and calls
 * `onReconnect`: notifications sent while it was away are lost for good, so
 * owners re-read the state they may have missed there.
 */
import pg from 'pg';
import { type Scheduler, systemScheduler, type TimerHandle } from '../clock.js';
import { RuntimeError } from '../errors.js';
import { clientConfig, type PgConnection } from './pgPool.js';

/** Reconnection delays: `initialMs × factor^attempt`, capped at `maxMs`, then jittered down by up to half. */
export interface ReconnectBackoff {
  /** Default 100 ms. */
  initialMs?: number;
  /** Default 5,000 ms. */
  maxMs?: number;
  /** Default 2. */
  factor?: number;
}

/** Options of {@link PgListener.start}. */
export interface PgListenerOptions {
  /** A connection string or `pg` client settings (never logged). */
  connection: PgConnection;
  channels: readonly string[];
  /** Set on the connection, so operators (and tests) can find it in `pg_stat_activity`. Default `switchyard-listener`. */
  applicationName?: string;
  onNotification(channel: string, payload: string): void;
  /** Called after every reconnection, once the channels are LISTENed again. Errors it throws go to `onError`. */
  onReconnect?: () => void | Promise<void>;
  /** The connection dropped (reconnection starts), or a reconnection attempt failed. */
  onError?: (error: Error) => void;
  backoff?: ReconnectBackoff;
  /** A `SELECT 1` this often finds a connection that died silently. Default 10,000 ms; 0 turns it off. */
  pingIntervalMs?: number;
  /** A ping without an answer after this counts as a dead connection. Default 5,000 ms. */
  pingTimeoutMs?: number;
  scheduler?: Scheduler;
}

/**
 * A LISTEN connection that reconnects.
 *
 * @example
 * ```ts
 * const listener = await PgListener.start({
 *   connection: 'postgres://postgres@127.0.0.1/app',
 *   channels: ['svc_auth_events_v1'],
 *   applicationName: 'gateway-a-auth',
 *   onNotification: (channel, payload) => handle(payload),
 *   onReconnect: () => reconcile(),
 * });
 * await listener.close();
 * ```
 */
export class PgListener {
  private readonly options: PgListenerOptions;
  private readonly scheduler: Scheduler;
  private client: pg.Client | undefined;
  private retryTimer: TimerHandle | undefined;
  private pingTimer: TimerHandle | undefined;
  private closed = false;
  private attempt = 0;
  private reconnecting = false;
  /** Completed reconnections since start. */
  reconnects = 0;

  private constructor(options: PgListenerOptions) {
    for (const channel of options.channels) {
      if (typeof channel !== 'string' || channel.length === 0 || channel.length > 63) {
        throw new RuntimeError('invalid_argument', 'a channel name is 1 to 63 characters');
      }
    }
    this.options = options;
    this.scheduler = options.scheduler ?? systemScheduler;
  }

  /** Connects and LISTENs; rejects when the first connection fails (a wrong URL should stop a start-up, not retry forever). */
  static async start(options: PgListenerOptions): Promise<PgListener> {
    const listener = new PgListener(options);
    await listener.connect();
    listener.schedulePing();
    return listener;
  }

  /** Whether the connection is up and LISTENing. */
  get connected(): boolean {
    return this.client !== undefined;
  }

  /** The server process id of the current connection (for `pg_terminate_backend` in tests and operations). */
  get backendPid(): number | undefined {
    return (this.client as { processID?: number } | undefined)?.processID;
  }

  /** Stops listening and closes the connection. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer !== undefined) this.scheduler.clearTimeout(this.retryTimer);
    if (this.pingTimer !== undefined) this.scheduler.clearTimeout(this.pingTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      ...clientConfig(this.options.connection),
      application_name: this.options.applicationName ?? 'switchyard-listener',
      keepAlive: true,
    });
    // Errors of a dropped connection arrive here; without a handler they would crash the process.
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new RuntimeError('store_failed', 'the LISTEN connection ended')));
    client.on('notification', (message) => {
      if (this.client !== client) return;
      try {
        this.options.onNotification(message.channel, message.payload ?? '');
      } catch (error) {
        // A throwing handler must not break the connection's message loop.
        this.options.onError?.(error as Error);
      }
    });
    try {
      await client.connect();
      for (const channel of this.options.channels) await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw new RuntimeError('store_failed', `cannot LISTEN: ${(error as Error).message}`, { cause: error });
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.removeAllListeners('end');
    client.end().catch(() => undefined);
    if (this.closed) return;
    this.options.onError?.(error);
    this.retry();
  }

  private retry(): void {
    if (this.closed || this.reconnecting) return;
    this.reconnecting = true;
    const { initialMs = 100, maxMs = 5000, factor = 2 } = this.options.backoff ?? {};
    const capped = Math.min(maxMs, initialMs * factor ** this.attempt);
    // Jitter: nodes that lost PostgreSQL together do not all come back in the same millisecond.
    const delay = capped / 2 + Math.random() * (capped / 2);
    this.attempt++;
    this.retryTimer = this.scheduler.setTimeout(() => {
      this.retryTimer = undefined;
      this.connect().then(
        async () => {
          this.reconnecting = false;
          if (this.closed || !this.client) return;
          this.attempt = 0;
          this.reconnects++;
          try {
            await this.options.onReconnect?.();
          } catch (error) {
            this.options.onError?.(error as Error);
          }
        },
        (error: Error) => {
          this.reconnecting = false;
          this.options.onError?.(error);
          this.retry();
        },
      );
    }, delay);
  }

  private schedulePing(): void {
    const interval = this.options.pingIntervalMs ?? 10_000;
    if (interval <= 0 || this.closed) return;
    this.pingTimer = this.scheduler.setTimeout(() => {
      this.pingTimer = undefined;
      void this.ping().finally(() => this.schedulePing());
    }, interval);
  }

  private async ping(): Promise<void> {
    const client = this.client;
    if (!client) return;
    let timer: TimerHandle | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = this.scheduler.setTimeout(() => resolve('timeout'), this.options.pingTimeoutMs ?? 5000);
    });
    const answer = await Promise.race([
      client.query('SELECT 1').then(
        () => 'ok' as const,
        () => 'failed' as const,
      ),
      timeout,
    ]);
    if (timer !== undefined) this.scheduler.clearTimeout(timer);
    if (answer === 'timeout') {
      // A half-open TCP connection: end() would wait on it, so destroy the socket and reconnect.
      (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      this.lost(client, new RuntimeError('timeout', 'the LISTEN connection did not answer a ping'));
    }
  }
}
