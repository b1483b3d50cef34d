/**
 * @module websocketGateway
 * The websocket routes of the data plane, `/v1/ws` and `/v1/responses`, on
 * the `ws` package with `noServer: true`: the node:http server's `upgrade`
 * event hands each request here, the {@link decideUpgrade} gate answers the
 * refused ones with plain HTTP, and each accepted socket becomes a
 * {@link WsConnection}. A keepalive pings every socket and drops one that
 * did not answer the previous ping; `close()` says goodbye (1001) to every
 * socket, aborting what is in flight, and terminates the ones that do not
 * finish the closing handshake promptly.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ClientIdentity } from '@switchyard/core-routing';
import type { Relay } from '@switchyard/relay';
import { every, type Scheduler, systemScheduler } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import { WebSocketServer } from 'ws';
import type { ClientKeyGuard } from '../../clientKeys/clientKeyGuard.js';
import { decideUpgrade, type ManagementCheck, refuseUpgrade, type UpgradeDeps } from './upgradeGate.js';
import { type RuntimeCredentials, type WebsocketEventMap, WsConnection } from './wsConnection.js';

/** `server.websocket.*`. */
export interface WebsocketSettings {
  /** Largest client message in bytes; a larger one closes the socket with 1009 (default 1 MiB). */
  maxMessageBytes: number;
  /** Keepalive ping interval (default 30 s). */
  pingIntervalMs: number;
  /** `response.create` requests in flight per socket (default 8). */
  maxInFlight: number;
  /** Buffered bytes per socket past which upstream reading pauses (default 1 MiB). */
  highWaterMark: number;
}

/** The defaults of {@link WebsocketSettings}. */
export const DEFAULT_WEBSOCKET_SETTINGS: WebsocketSettings = {
  maxMessageBytes: 1024 * 1024,
  pingIntervalMs: 30_000,
  maxInFlight: 8,
  highWaterMark: 1024 * 1024,
};

/** Options of {@link createWebsocketGateway}. */
export interface WebsocketGatewayOptions {
  relay: Relay;
  /** The `/v1/*` client key rule (`api-keys`; open when empty). */
  acceptsClientKey(key: string | undefined): boolean;
  /** Who holds a client key (its identity in the relay's events, so a socket's requests are accounted to it). */
  clientOf?(key: string | undefined): ClientIdentity | undefined;
  /** Runtime client keys: every `response.create` on a socket opened with one is checked against its limits. */
  clientKeys?: ClientKeyGuard;
  /** The access rules (Origin whatever authorized the upgrade; Host and locality for a key-less caller). */
  accessDenial?: UpgradeDeps['accessDenial'];
  /** The management API's rules, for `X-Management-Key`. */
  management: ManagementCheck;
  /** Where `auth.upsert` and `auth.delete` go (the credential manager). */
  credentials: RuntimeCredentials;
  /** Settings in force; `maxMessageBytes`, `pingIntervalMs` and `highWaterMark` are read once, at creation. */
  settings?: () => Partial<WebsocketSettings>;
  scheduler?: Scheduler;
  /** Faults of the gateway's own. */
  logError?: (fields: Record<string, unknown>, message: string) => void;
}

/** The websocket side of the data plane. */
export interface WebsocketGateway {
  /** `websocket:open`, `:rejected`, `:close` and `:message`, for metrics and logs. */
  readonly events: EventEmitter<WebsocketEventMap>;
  /** Sockets open now. */
  readonly connections: number;
  /** The node:http server's `upgrade` listener for websocket upgrades (any other upgrade is refused with a 400). */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /**
   * Re-checks the client key of every open socket (after `api-keys`
   * changed); a socket whose key is no longer accepted is closed with 1008.
   */
  revalidate(): void;
  /** Closes every socket (1001) and refuses new upgrades (503); resolves once all are gone. */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Creates the websocket routes.
 *
 * @example
 * ```ts
 * const websocket = createWebsocketGateway({ relay, acceptsClientKey: (key) => keys.accepts(key), management, credentials: manager });
 * server.on('upgrade', (req, socket, head) => {
 *   // Any other upgrade (h2c) is served as plain HTTP/1.1 rather than refused.
 *   if (isWebsocketUpgrade(req)) websocket.handleUpgrade(req, socket, head);
 *   else serveWithoutUpgrade(server, req, socket, head);
 * });
 * ```
 */
export function createWebsocketGateway(options: WebsocketGatewayOptions): WebsocketGateway {
  const settings = (): WebsocketSettings => ({ ...DEFAULT_WEBSOCKET_SETTINGS, ...options.settings?.() });
  const initial = settings();
  const scheduler = options.scheduler ?? systemScheduler;
  const events = new EventEmitter<WebsocketEventMap>();
  const logError = options.logError ?? (() => undefined);
  // Compression is off: a zip bomb must not get past maxPayload, and LLM event streams are small frames.
  const server = new WebSocketServer({ noServer: true, maxPayload: initial.maxMessageBytes, perMessageDeflate: false });
  const connections = new Set<WsConnection>();
  let closing = false;

  const deps = {
    relay: options.relay,
    credentials: options.credentials,
    management: options.management,
    events,
    clock: scheduler,
    maxInFlight: () => settings().maxInFlight,
    highWaterMark: initial.highWaterMark,
    logError,
    clientOf: (key: string | undefined) => options.clientOf?.(key),
    ...(options.clientKeys ? { clientKeys: options.clientKeys } : {}),
  };

  const stopKeepalive = every(scheduler, initial.pingIntervalMs, () => {
    for (const connection of connections) {
      // No pong (and no message) since the last ping: the peer is gone without saying so.
      if (!connection.alive) connection.terminate();
      else connection.ping();
    }
  });

  return {
    events,
    get connections() {
      return connections.size;
    },
    handleUpgrade(req, socket, head) {
      const requestId = crypto.randomUUID();
      socket.on('error', () => socket.destroy());
      const decision = closing
        ? ({
            ok: false,
            route: 'other',
            status: 503,
            reason: 'shutting_down',
            code: 'shutting_down',
            type: 'server_error',
            message: 'the gateway is shutting down',
          } as const)
        : decideUpgrade(req, {
            acceptsClientKey: options.acceptsClientKey,
            management: options.management,
            ...(options.accessDenial ? { accessDenial: options.accessDenial } : {}),
          });
      if (!decision.ok) {
        events.emit('websocket:rejected', { route: decision.route, status: decision.status, reason: decision.reason, at: scheduler.now() });
        refuseUpgrade(socket, decision, requestId);
        return;
      }
      server.handleUpgrade(req, socket, head, (ws) => {
        const connection = new WsConnection(ws, req, decision, deps);
        connections.add(connection);
        ws.once('close', () => connections.delete(connection));
        if (closing) connection.close(1001, 'gateway shutting down');
      });
    },
    revalidate() {
      for (const connection of connections) {
        if (!options.acceptsClientKey(connection.clientKey)) connection.close(1008, 'API key no longer accepted');
      }
    },
    async close(closeOptions = {}) {
      closing = true;
      stopKeepalive();
      const gone = Promise.all([...connections].map((connection) => connection.closed));
      for (const connection of connections) connection.close(1001, 'gateway shutting down');
      // Real time on purpose: the grace waits on peers' sockets, and a gateway on a fake clock must still shut down.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, closeOptions.graceMs ?? 1000);
      });
      await Promise.race([gone, grace]);
      clearTimeout(timer);
      for (const connection of connections) connection.terminate();
      await gone;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
