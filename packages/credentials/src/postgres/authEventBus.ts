/**
 * @module authEventBus
 * The consuming side of the cross-node auth event bus, and the publisher of
 * `config.reload`. One dedicated LISTEN connection (a `PgListener`) hears
 * every event; each is validated, de-duplicated by `event_id`, checked
 * against the newest revision this node knows for the credential, and then
 * turned into a `StoreChange` after reading the credential's current
 * revision from the store. Delivery is at least once and the consumer is
 * idempotent, so the periodic reconciliation (and the one that follows
 * every reconnection) can simply report whatever changed behind its back.
 *
 * Events are handled one at a time, in the order they arrive, and the
 * reconciliation runs in the same line, so the two never race.
 */
import { every, type Scheduler, systemScheduler } from '@switchyard/runtime';
import { type PgConnection, PgListener, type ReconnectBackoff } from '@switchyard/runtime/postgres';
import { EventEmitter } from 'eventemitter3';
import type pg from 'pg';
import { CredentialsError } from '../errors.js';
import type { StoreBackend, StoreChange } from '../store/credentialStore.js';
import {
  type AuthChangeEvent,
  type AuthEvent,
  type AuthEventCorrelation,
  type ConfigReloadEvent,
  correlationFields,
  DEFAULT_AUTH_EVENTS_CHANNEL,
  decodeAuthEvent,
  encodeAuthEvent,
  newUlid,
} from './authEvent.js';
import { TtlSet } from './ttlSet.js';

/** The revision of one stored credential, and whether it is a tombstone. */
export interface RevisionState {
  revision: number;
  deleted: boolean;
}

/** What the bus reads from the store. */
export interface AuthEventSource {
  /** The current state of one credential; undefined when it was never stored. */
  revisionOf(id: string): Promise<RevisionState | undefined>;
  /** Every credential's state, tombstones included: the reconciliation's one cheap query. */
  revisions(): Promise<Map<string, RevisionState>>;
}

/** Tunables of the bus (the `events` option of `PostgresCredentialStore.open`). */
export interface AuthEventBusSettings {
  /** NOTIFY channel (default `svc_auth_events_v1`). Channels are database-wide: tests use one per file. */
  channel?: string;
  /** Identifies this handle in `origin.instance_id` (default a new ULID). */
  instanceId?: string;
  /** `subject.tenant_id` of the events this handle publishes (default `default`; the gateway's `cluster.tenant_id`). */
  tenantId?: string;
  /** How long an `event_id` is remembered (default 15 minutes). */
  dedupeTtlMs?: number;
  /** At most this many remembered ids (default 10,000; the oldest go first). */
  dedupeMaxEntries?: number;
  /** Interval of the reconciliation poll (default 30 s; 0 turns the timer off, reconnections still reconcile). */
  reconcileIntervalMs?: number;
  /** `application_name` of the LISTEN connection (default `switchyard-auth-events`). */
  applicationName?: string;
  backoff?: ReconnectBackoff;
  pingIntervalMs?: number;
  /** Called for every payload discarded as invalid (for a metric). */
  onInvalid?: (info: { reason: string }) => void;
}

/** Options of {@link AuthEventBus.start}. */
export interface AuthEventBusOptions extends AuthEventBusSettings {
  connection: PgConnection;
  /** Where `config.reload` is published from. */
  pool: pg.Pool;
  nodeId: string;
  backendMode: Exclude<StoreBackend, 'memory'>;
  source: AuthEventSource;
  /** Receives every change heard from other handles or repaired by reconciliation. */
  onChange: (change: StoreChange) => void;
  scheduler?: Scheduler;
}

/** Counters of the bus, for metrics. */
export interface AuthEventBusStats {
  /** Payloads heard on the channel. */
  received: number;
  /** Events that led to a change being reported. */
  applied: number;
  invalid: number;
  duplicates: number;
  /** Events at or below a revision this node already knew. */
  stale: number;
  /** This handle's own events, heard back. */
  own: number;
  /** Changes reported by reconciliation (missed events). */
  repaired: number;
  reconciliations: number;
  reconnects: number;
}

/** Typed events of the bus. */
export interface AuthEventBusEvents {
  invalid: [{ reason: string }];
  /** A valid event from another node was applied. */
  applied: [AuthChangeEvent];
  'config:reload': [ConfigReloadEvent];
  reconciled: [{ repaired: number }];
  /** The LISTEN connection dropped, or a reconciliation failed. */
  error: [Error];
}

/**
 * The auth event bus of one store handle.
 *
 * @example
 * ```ts
 * // Normally started by PostgresCredentialStore.open; reach it as store.bus.
 * store.bus.onConfigReload((event) => reloadConfig(event.correlation));
 * await store.bus.publishConfigReload({ actor: 'admin', request_id: 'req-1' });
 * ```
 */
export class AuthEventBus {
  readonly events = new EventEmitter<AuthEventBusEvents>();
  readonly channel: string;
  readonly origin: AuthEvent['origin'];
  /** `subject.tenant_id` of this handle's events. */
  readonly tenantId: string;
  private readonly options: AuthEventBusOptions;
  private readonly scheduler: Scheduler;
  private readonly seen: TtlSet;
  /** The newest revision this handle knows per credential. */
  private known = new Map<string, RevisionState>();
  private readonly counters: AuthEventBusStats = {
    received: 0,
    applied: 0,
    invalid: 0,
    duplicates: 0,
    stale: 0,
    own: 0,
    repaired: 0,
    reconciliations: 0,
    reconnects: 0,
  };
  /** Events and reconciliations run one after another on this chain. */
  private line: Promise<void>;
  private listener: PgListener | undefined;
  private stopPoll: (() => void) | undefined;
  private closed = false;

  private constructor(options: AuthEventBusOptions, gate: Promise<void>) {
    this.options = options;
    this.scheduler = options.scheduler ?? systemScheduler;
    this.channel = options.channel ?? DEFAULT_AUTH_EVENTS_CHANNEL;
    this.tenantId = options.tenantId ?? 'default';
    this.origin = { node_id: options.nodeId, instance_id: options.instanceId ?? newUlid(), backend_mode: options.backendMode };
    this.seen = new TtlSet(this.scheduler, options.dedupeTtlMs ?? 15 * 60_000, options.dedupeMaxEntries ?? 10_000);
    this.line = gate;
  }

  /**
   * LISTENs, then takes the baseline of revisions (events heard meanwhile
   * wait for it), then starts the reconciliation poll.
   */
  static async start(options: AuthEventBusOptions): Promise<AuthEventBus> {
    if (typeof options.nodeId !== 'string' || options.nodeId.length === 0 || options.nodeId.length > 200) {
      throw new CredentialsError('invalid_config', 'cluster.node_id must be 1 to 200 characters', { field: 'node_id' });
    }
    const tenant = options.tenantId ?? 'default';
    if (typeof tenant !== 'string' || tenant.length === 0 || tenant.length > 64) {
      throw new CredentialsError('invalid_config', 'cluster.tenant_id must be 1 to 64 characters', { field: 'tenant_id' });
    }
    let open!: () => void;
    const bus = new AuthEventBus(options, new Promise<void>((resolve) => (open = resolve)));
    try {
      bus.listener = await PgListener.start({
        connection: options.connection,
        channels: [bus.channel],
        applicationName: options.applicationName ?? 'switchyard-auth-events',
        onNotification: (_channel, payload) => bus.enqueue(() => bus.handle(payload)),
        onReconnect: () => {
          bus.counters.reconnects++;
          return bus.reconcile();
        },
        onError: (error) => bus.events.emit('error', error),
        ...(options.backoff ? { backoff: options.backoff } : {}),
        ...(options.pingIntervalMs === undefined ? {} : { pingIntervalMs: options.pingIntervalMs }),
        scheduler: bus.scheduler,
      });
      bus.known = await options.source.revisions();
    } catch (error) {
      open();
      await bus.close();
      throw error instanceof CredentialsError ? error : new CredentialsError('store_failed', (error as Error).message, { cause: error });
    }
    open();
    const interval = options.reconcileIntervalMs ?? 30_000;
    if (interval > 0) bus.stopPoll = every(bus.scheduler, interval, () => bus.reconcile());
    return bus;
  }

  /** The counters (a copy). */
  stats(): AuthEventBusStats {
    return { ...this.counters };
  }

  /** The LISTEN connection (its `connected`, `reconnects` and `backendPid`). */
  get listenerState(): Pick<PgListener, 'connected' | 'reconnects' | 'backendPid'> | undefined {
    return this.listener;
  }

  /**
   * A change event for a write of this handle, with `mutation.revision`
   * (and, for deletes, `subject.provider`) to be filled in by the SQL that
   * makes the change. Refuses an event that could outgrow NOTIFY's limit.
   */
  changeEvent(type: 'auth.upsert' | 'auth.delete', id: string, provider: string, correlation: AuthEventCorrelation | undefined): string {
    const { correlation: block, reason } = correlationFields(correlation);
    const event: AuthChangeEvent = {
      schema_version: 1,
      event_id: newUlid(this.scheduler.now()),
      event_type: type,
      occurred_at: new Date(this.scheduler.now()).toISOString(),
      origin: this.origin,
      subject: { auth_id: id, provider, tenant_id: this.tenantId },
      mutation: { revision: 1, kind: type === 'auth.delete' ? 'delete' : 'update', reason },
      correlation: block,
    };
    // Headroom for the revision's digits and a provider of 64 characters, both written by SQL.
    return encodeAuthEvent(event, 100);
  }

  /** Records a write of this handle, so its echo and older events are not reported again. */
  recordLocal(id: string, state: RevisionState): void {
    const before = this.known.get(id);
    if (!before || before.revision < state.revision) this.known.set(id, state);
  }

  /**
   * Asks every node (but this one) to reload its configuration.
   *
   * @example
   * ```ts
   * await store.bus.publishConfigReload({ request_id: 'req-42', actor: 'operator' });
   * ```
   */
  async publishConfigReload(correlation?: AuthEventCorrelation): Promise<ConfigReloadEvent> {
    const { correlation: block, reason } = correlationFields(correlation);
    const event: ConfigReloadEvent = {
      schema_version: 1,
      event_id: newUlid(this.scheduler.now()),
      event_type: 'config.reload',
      occurred_at: new Date(this.scheduler.now()).toISOString(),
      origin: this.origin,
      subject: { auth_id: null, provider: null, tenant_id: this.tenantId },
      mutation: { revision: null, kind: 'reload', reason: correlation?.reason === undefined ? 'config reload' : reason },
      correlation: block,
    };
    try {
      await this.options.pool.query('SELECT pg_notify($1, $2)', [this.channel, encodeAuthEvent(event)]);
    } catch (error) {
      throw new CredentialsError('store_failed', `cannot publish config.reload: ${(error as Error).message}`, { cause: error });
    }
    return event;
  }

  /** Calls `handler` for every `config.reload` published by another node; returns the unsubscribe function. */
  onConfigReload(handler: (event: ConfigReloadEvent) => void): () => void {
    this.events.on('config:reload', handler);
    return () => this.events.off('config:reload', handler);
  }

  /**
   * Compares every stored revision with the newest this handle knows and
   * reports what it missed. Runs on the poll, after each reconnection, and
   * whenever called.
   */
  reconcile(): Promise<void> {
    return this.enqueue(async () => {
      let states: Map<string, RevisionState>;
      try {
        states = await this.options.source.revisions();
      } catch (error) {
        this.events.emit('error', error as Error);
        return;
      }
      let repaired = 0;
      for (const [id, state] of states) {
        const before = this.known.get(id);
        if (before && before.revision >= state.revision) continue;
        this.known.set(id, state);
        // A tombstone of a credential this handle never held needs no report.
        if (state.deleted && (!before || before.deleted)) continue;
        this.report(id, state);
        repaired++;
      }
      for (const [id, before] of [...this.known]) {
        if (states.has(id)) continue;
        // The row vanished altogether (a table restored or truncated by hand).
        this.known.delete(id);
        if (!before.deleted) {
          this.options.onChange({ type: 'auth.delete', id, origin: 'external' });
          repaired++;
        }
      }
      this.counters.reconciliations++;
      this.counters.repaired += repaired;
      this.events.emit('reconciled', { repaired });
    });
  }

  /** Stops listening and polling; waits for the event in hand. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopPoll?.();
    await this.listener?.close();
    await this.line;
    this.events.removeAllListeners();
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.line.then(() => (this.closed ? undefined : task()));
    this.line = run.catch((error: unknown) => {
      this.events.emit('error', error as Error);
    });
    return this.line;
  }

  private async handle(payload: string): Promise<void> {
    this.counters.received++;
    const event = this.parse(payload);
    if (!event) return;
    if (!this.seen.add(event.event_id)) {
      this.counters.duplicates++;
      return;
    }
    if (event.origin.instance_id === this.origin.instance_id) {
      this.counters.own++;
      return;
    }
    if (event.event_type === 'config.reload') {
      this.counters.applied++;
      this.events.emit('config:reload', event);
      return;
    }
    const id = event.subject.auth_id;
    const before = this.known.get(id);
    // A revision, when the event has one, rules out a stale event at once; without one the store decides.
    const revision = event.mutation.revision;
    if (revision !== undefined && before && before.revision >= revision) {
      this.counters.stale++;
      return;
    }
    // The event says "changed"; the store says what it is now (possibly newer than the event).
    const state = await this.options.source.revisionOf(id);
    if (!state || (before && before.revision >= state.revision)) {
      this.counters.stale++;
      return;
    }
    this.known.set(id, state);
    this.counters.applied++;
    this.report(id, state);
    this.events.emit('applied', event);
  }

  private parse(payload: string): AuthEvent | undefined {
    const decoded = decodeAuthEvent(payload);
    if ('event' in decoded) return decoded.event;
    this.counters.invalid++;
    this.options.onInvalid?.({ reason: decoded.reason });
    this.events.emit('invalid', { reason: decoded.reason });
    return undefined;
  }

  private report(id: string, state: RevisionState): void {
    this.options.onChange({ type: state.deleted ? 'auth.delete' : 'auth.upsert', id, revision: state.revision, origin: 'external' });
  }
}
