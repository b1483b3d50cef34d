/**
 * @module idleConnections
 * The bound on idle upstream connections (`max_idle_conns_per_host`,
 * `max_idle_conns`), which undici lacks: it bounds idle time, not idle count.
 * Each pooled connection is an undici `Client` tracked here; one is idle when
 * it is connected and has no request queued or running.
 *
 * A connection that turns idle beyond the bound is not closed at once, as
 * Go's `putIdleConn` does: it is closed if it is still idle, and still beyond
 * the bound, after {@link SURPLUS_GRACE_MS}. Under a steady load of more
 * requests in flight than the bound (32 clients against the default 10), a
 * connection goes back to work within milliseconds; closing it the moment
 * it turned idle made the pool open a new connection for nearly every
 * request, about a third of the default config's CPU per request in the
 * relay benchmark. After a burst, the surplus still closes within about two
 * grace periods.
 */
import type { Socket } from 'node:net';
import { type buildConnector, Client, type Dispatcher } from 'undici';

/**
 * How long a connection beyond the idle bound may stay idle before it is
 * closed: long enough for a busy pool to reuse it, short against the 90 s an
 * idle connection within the bound is kept.
 */
export const SURPLUS_GRACE_MS = 1_000;

/** Idle connections kept for reuse, per origin and in total. */
export interface IdleLimits {
  perHost: number;
  total: number;
}

/** The idle connections of one agent, and the timer that trims those beyond the limits. */
export class IdleConnections {
  /** Idle clients by origin, in the order they turned idle (a Set keeps insertion order). */
  private readonly byOrigin = new Map<string, Set<TrackedClient>>();
  /** Every client, busy or idle, by origin: what {@link retire} ends. */
  private readonly clients = new Map<string, Set<TrackedClient>>();
  private total = 0;
  private trimTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly limits: IdleLimits) {}

  /** A client the pool of `client.originKey` just created. */
  add(client: TrackedClient): void {
    let set = this.clients.get(client.originKey);
    if (set === undefined) {
      set = new Set();
      this.clients.set(client.originKey, set);
    }
    set.add(client);
  }

  /** Ends every connection to `origin`: idle ones now, busy ones as their request ends. */
  retire(origin: string): number {
    let retired = 0;
    for (const client of this.clients.get(origin) ?? []) {
      if (!client.isConnected()) continue;
      retired++;
      if (client.idle) {
        this.busy(client);
        client.closeConnection();
      } else client.retiring = true;
    }
    return retired;
  }

  /** Called when `client` may have just turned idle: it joins the idle set; beyond the limits, a trim is due. */
  settle(client: TrackedClient): void {
    if (client.retiring && client.isIdle()) {
      client.retiring = false;
      client.closeConnection();
      return;
    }
    if (client.idle || !client.isIdle()) return;
    let idle = this.byOrigin.get(client.originKey);
    if (idle === undefined) {
      idle = new Set();
      this.byOrigin.set(client.originKey, idle);
    }
    idle.add(client);
    client.idle = true;
    client.idleSince = performance.now();
    this.total++;
    if (idle.size > this.limits.perHost || this.total > this.limits.total) this.scheduleTrim();
  }

  /** `client` took a request or lost its connection: it no longer counts as idle. */
  busy(client: TrackedClient): void {
    if (!client.idle) return;
    client.idle = false;
    this.total--;
    this.byOrigin.get(client.originKey)?.delete(client);
  }

  /** Idle connections now held: per origin, and in total. */
  counts(): { total: number; byOrigin: Record<string, number> } {
    const byOrigin: Record<string, number> = {};
    for (const [origin, idle] of this.byOrigin) if (idle.size > 0) byOrigin[origin] = idle.size;
    return { total: this.total, byOrigin };
  }

  /** Stops the trim timer (the agent is closing; its connections close with it). */
  stop(): void {
    if (this.trimTimer !== undefined) clearTimeout(this.trimTimer);
    this.trimTimer = undefined;
  }

  private scheduleTrim(): void {
    if (this.trimTimer !== undefined) return;
    this.trimTimer = setTimeout(() => {
      this.trimTimer = undefined;
      this.trim();
    }, SURPLUS_GRACE_MS);
    // A trim is housekeeping: it never keeps the process alive.
    this.trimTimer.unref();
  }

  /**
   * Closes idle connections beyond the limits that have been idle for the grace period, those idle
   * longest first; if the limits are still exceeded (by connections that turned idle more recently),
   * looks again after another grace period.
   */
  private trim(): void {
    const oldEnough = performance.now() - SURPLUS_GRACE_MS;
    for (const idle of this.byOrigin.values()) {
      for (const client of idle) {
        if (idle.size <= this.limits.perHost) break;
        if (client.idleSince > oldEnough) break; // the rest turned idle later still
        this.close(client);
      }
    }
    if (this.total > this.limits.total) {
      const longestIdle = [...this.byOrigin.values()].flatMap((idle) => [...idle]).sort((a, b) => a.idleSince - b.idleSince);
      for (const client of longestIdle) {
        if (this.total <= this.limits.total || client.idleSince > oldEnough) break;
        this.close(client);
      }
    }
    if (this.overLimits()) this.scheduleTrim();
  }

  private overLimits(): boolean {
    if (this.total > this.limits.total) return true;
    for (const idle of this.byOrigin.values()) if (idle.size > this.limits.perHost) return true;
    return false;
  }

  private close(client: TrackedClient): void {
    this.busy(client);
    client.closeConnection();
  }
}

type ClientOptions = ConstructorParameters<typeof Client>[1] & { connect?: unknown };

/** One pooled connection whose idle state {@link IdleConnections} tracks. */
export class TrackedClient extends Client {
  /** Whether this client sits in the idle set. */
  idle = false;
  /** When it last turned idle (`performance.now()`). */
  idleSince = 0;
  /** Close the connection once its request ends (a reset of its origin's pool). */
  retiring = false;
  readonly originKey: string;
  private readonly socketRef: { socket: Socket | null };
  private readonly tracker: IdleConnections;

  constructor(origin: string | URL, options: object, tracker: IdleConnections) {
    const socketRef: { socket: Socket | null } = { socket: null };
    const clientOptions = options as ClientOptions;
    const connect = clientOptions.connect as buildConnector.connector;
    super(origin, {
      ...clientOptions,
      connect: ((connectOptions, callback) =>
        connect(connectOptions, (error, socket) => {
          socketRef.socket = socket as Socket | null;
          (callback as (error: Error | null, socket: Socket | null) => void)(error, socket as Socket | null);
        })) as buildConnector.connector,
    });
    this.originKey = new URL(String(origin)).origin;
    this.socketRef = socketRef;
    this.tracker = tracker;
    tracker.add(this);
    // `drain` follows the end of each request; the pool's own drain listener, added after this one,
    // may hand the client a queued request in the same turn, so decide once that has run.
    this.on('drain', () => queueMicrotask(() => tracker.settle(this)));
    this.on('connect', () => queueMicrotask(() => tracker.settle(this)));
    this.on('disconnect', () => {
      socketRef.socket = null;
      tracker.busy(this);
    });
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.tracker.busy(this);
    return super.dispatch(options, handler);
  }

  isConnected(): boolean {
    return this.socketRef.socket !== null;
  }

  isIdle(): boolean {
    const stats = this.stats;
    return Boolean(stats.connected) && stats.size === 0 && this.socketRef.socket !== null && !this.closed && !this.destroyed;
  }

  /** Ends the idle connection; the client stays in its pool and connects again when next given a request. */
  closeConnection(): void {
    const socket = this.socketRef.socket;
    this.socketRef.socket = null;
    socket?.destroy();
  }
}
