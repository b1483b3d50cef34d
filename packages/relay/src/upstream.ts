/**
 * @module upstream
 * The HTTP transport to real providers: one undici `Agent` whose per-origin
 * pools keep connections alive between requests. Responses are read as
 * streams, never buffered here, so backpressure reaches the upstream socket.
 *
 * Open connections are not capped unless `maxConnsPerHost` says so: an LLM
 * stream holds its connection for seconds to minutes, and a cap turns the
 * next stream into a wait. What is bounded is the idle connections kept for
 * reuse, as Go's `http.Transport` bounds them: undici bounds idle time only,
 * so each pooled client is tracked, and a connection idle beyond
 * `maxIdleConnsPerHost` (or `maxIdleConns` over all hosts) is closed unless
 * a request reuses it within a second (see {@link IdleConnections}).
 */
import { EventEmitter } from 'node:events';
import type { LookupFunction } from 'node:net';
import { Agent, Client, type Dispatcher, Pool, errors as undiciErrors } from 'undici';
import { type BufferLimits, dispatchBuffered } from './bufferedDispatch.js';
import { IdleConnections, TrackedClient } from './idleConnections.js';
import type { SendOptions, Transport } from './providers/adapter.js';
import { isStaleConnectionError, staleAwareConnector } from './staleConnection.js';
import type { UpstreamFailure, UpstreamRequest, UpstreamResponse } from './types.js';

/** How a transport opens connections, fixed for its lifetime (unlike the pool settings, which a reload changes). */
export interface TransportConnectOptions {
  /**
   * Resolves the host of each new connection (default `dns.lookup`). Called
   * once per connection, never per request: pooled connections are reused.
   * The gateway passes one that re-applies its SSRF guard to hosts set
   * through its management API, so a name that re-resolves to a private
   * address (DNS rebinding) is refused at connect time.
   */
  lookup?: LookupFunction;
}

/** `server.operations.connection_pool` plus the request timeout. */
export interface ConnectionPoolSettings {
  /**
   * Idle connections kept for reuse over all upstream hosts (default 100). A
   * connection that finishes its request when this many are already idle is
   * closed unless a request reuses it within a second.
   */
  maxIdleConns?: number;
  /**
   * Idle connections kept for reuse per upstream host (default 10). A bound on
   * idle connections only: requests in flight open as many connections as
   * they need (see `maxConnsPerHost`).
   */
  maxIdleConnsPerHost?: number;
  /**
   * Open connections per upstream host, busy or idle (default 0: unlimited).
   * Requests beyond it wait in the pool for a connection to free up.
   */
  maxConnsPerHost?: number;
  /** How long an idle connection is kept (default 90 s); an upstream's shorter keep-alive hint wins. */
  idleConnTimeoutMs?: number;
  /** Time allowed for the response headers, and between body chunks (default 60 s). */
  requestTimeoutMs?: number;
  /** Time allowed to open a connection (default 10 s). */
  connectTimeoutMs?: number;
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** Where a URL goes, as undici's `request` takes it. */
interface Target {
  origin: string;
  path: string;
}

const TARGET_CACHE_LIMIT = 256;
// A provider's few endpoint URLs recur on every request: parse each once, not per request.
const targets = new Map<string, Target>();

function targetOf(url: string): Target {
  let target = targets.get(url);
  if (target === undefined) {
    const parsed = new URL(url);
    target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    // URLs can carry per-request parts (a Gemini key in the query, say): keep the cache bounded.
    if (targets.size >= TARGET_CACHE_LIMIT) targets.clear();
    targets.set(url, target);
  }
  return target;
}

/**
 * An AbortSignal as undici sees it: an EventEmitter that emits `abort` when the signal aborts.
 * undici attaches an abort listener to the signal of every request and removes it when the request
 * ends; on an AbortSignal (an EventTarget) that pair cost 2.2% of a relayed request's CPU in the
 * relay benchmark's profile, on an EventEmitter 0.9%. The data plane passes one signal per client
 * connection, so a connection's requests share one emitter.
 */
class AbortEmitter extends EventEmitter {
  constructor(private readonly signal: AbortSignal) {
    super();
    // One listener per request in flight on the signal: as many as the caller shares it between.
    this.setMaxListeners(0);
  }

  get aborted(): boolean {
    return this.signal.aborted;
  }

  get reason(): unknown {
    return this.signal.reason;
  }
}

const abortEmitters = new WeakMap<AbortSignal, AbortEmitter>();

function abortEmitterOf(signal: AbortSignal): AbortEmitter {
  let emitter = abortEmitters.get(signal);
  if (emitter === undefined) {
    const created = new AbortEmitter(signal);
    // An aborted signal stays aborted: undici reads `aborted` before it listens.
    if (!signal.aborted) signal.addEventListener('abort', () => created.emit('abort'), { once: true });
    abortEmitters.set(signal, created);
    emitter = created;
  }
  return emitter;
}

/**
 * Sends requests through undici.
 *
 * @example
 * ```ts
 * const transport = new UndiciTransport({ maxIdleConnsPerHost: 32, requestTimeoutMs: 120_000 });
 * ```
 */
export class UndiciTransport implements Transport {
  private agent: Agent;
  private idle: IdleConnections;
  private settings: Required<ConnectionPoolSettings>;
  private readonly connectOptions: TransportConnectOptions;

  constructor(settings: ConnectionPoolSettings = {}, connectOptions: TransportConnectOptions = {}) {
    this.settings = UndiciTransport.resolve(settings);
    this.connectOptions = connectOptions;
    this.idle = new IdleConnections({ perHost: 0, total: 0 });
    this.agent = this.createAgent();
  }

  private static resolve(settings: ConnectionPoolSettings): Required<ConnectionPoolSettings> {
    return {
      maxIdleConns: settings.maxIdleConns ?? 100,
      maxIdleConnsPerHost: settings.maxIdleConnsPerHost ?? 10,
      maxConnsPerHost: settings.maxConnsPerHost ?? 0,
      idleConnTimeoutMs: settings.idleConnTimeoutMs ?? 90_000,
      requestTimeoutMs: settings.requestTimeoutMs ?? 60_000,
      connectTimeoutMs: settings.connectTimeoutMs ?? 10_000,
    };
  }

  private createAgent(): Agent {
    const s = this.settings;
    // Each agent has its own idle set: a replaced agent's connections close with it.
    const idle = new IdleConnections({ perHost: s.maxIdleConnsPerHost, total: s.maxIdleConns });
    this.idle = idle;
    const connections = s.maxConnsPerHost > 0 ? s.maxConnsPerHost : null;
    return new Agent({
      factory: (origin, options) =>
        new Pool(origin, {
          ...options,
          connections,
          factory: (clientOrigin, clientOptions) => new TrackedClient(clientOrigin, clientOptions, idle),
        }),
      keepAliveTimeout: s.idleConnTimeoutMs,
      keepAliveMaxTimeout: s.idleConnTimeoutMs,
      headersTimeout: s.requestTimeoutMs,
      bodyTimeout: s.requestTimeoutMs,
      connect: this.connector(),
    });
  }

  /** undici's connector with the pool's connect timeout and lookup, watching sockets for the keep-alive race. */
  private connector() {
    const lookup = this.connectOptions.lookup;
    return staleAwareConnector({ timeout: this.settings.connectTimeoutMs, ...(lookup ? { lookup } : {}) });
  }

  /** Applies new pool settings; requests in flight finish on the old pools. */
  reconfigure(settings: ConnectionPoolSettings): void {
    const next = UndiciTransport.resolve(settings);
    if (JSON.stringify(next) === JSON.stringify(this.settings)) return;
    const old = this.agent;
    this.idle.stop();
    this.settings = next;
    this.agent = this.createAgent();
    void old.close().catch(() => undefined);
  }

  /** Idle connections kept for reuse now, per upstream origin and in total. */
  idleConnections(): { total: number; byOrigin: Record<string, number> } {
    return this.idle.counts();
  }

  /**
   * Drops pooled connections (a self-healing action): those to `origin`
   * (`https://api.example.com`) only when given, leaving every other
   * provider's pool as it is, else all of them. Idle connections close at
   * once, busy ones as their request ends. Resolves with the connections
   * retired when `origin` is given.
   */
  async resetConnections(origin?: string): Promise<number | undefined> {
    if (origin !== undefined) return this.idle.retire(new URL(origin).origin);
    const old = this.agent;
    this.idle.stop();
    this.agent = this.createAgent();
    await old.close().catch(() => undefined);
    return undefined;
  }

  send(request: UpstreamRequest, options: SendOptions): Promise<UpstreamResponse> {
    let target: Target;
    try {
      target = targetOf(request.url);
    } catch (error) {
      // A promise-returning method fails by rejecting, never by throwing at its caller.
      return Promise.reject(error);
    }
    const { origin, path } = target;
    const signal = options.signal ? abortEmitterOf(options.signal) : undefined;
    const requestOptions: Dispatcher.DispatchOptions = {
      origin,
      path,
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
    };
    // Not an async function: this runs for every request, and each async layer costs a promise and a tick.
    return this.sendOn(this.agent, requestOptions, signal, options.buffer).catch((error: unknown) => {
      // The keep-alive race: the upstream closed a pooled connection as this request went out on it,
      // before answering. Not the provider's failure: send once more, on a connection of its own
      // (the pool may hold more connections the upstream closed in the same sweep).
      if (!isStaleConnectionError(error) || options.signal?.aborted) throw error;
      return this.sendOnFreshConnection(requestOptions, signal, options.buffer);
    });
  }

  /** One call on `dispatcher`: read whole (`buffer`) through a dispatch handler, else as undici's stream. */
  private sendOn(
    dispatcher: Dispatcher,
    requestOptions: Dispatcher.DispatchOptions,
    signal: AbortEmitter | undefined,
    buffer: BufferLimits | undefined,
  ): Promise<UpstreamResponse> {
    if (buffer) return dispatchBuffered(dispatcher, requestOptions, buffer, signal);
    return streamed(dispatcher, requestOptions, signal);
  }

  /** Sends on a connection opened for this request alone, closed once its answer has been read. */
  private async sendOnFreshConnection(
    requestOptions: Dispatcher.DispatchOptions,
    signal: AbortEmitter | undefined,
    buffer: BufferLimits | undefined,
  ): Promise<UpstreamResponse> {
    const s = this.settings;
    const client = new Client(requestOptions.origin as string, {
      headersTimeout: s.requestTimeoutMs,
      bodyTimeout: s.requestTimeoutMs,
      connect: this.connector(),
    });
    try {
      return await this.sendOn(client, requestOptions, signal, buffer);
    } finally {
      // `close` waits for the request in flight, body included, then ends the connection.
      void client.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    this.idle.stop();
    await this.agent.close();
  }
}

/** One call on `dispatcher` whose answer is read as undici's stream. */
async function streamed(
  dispatcher: Dispatcher,
  requestOptions: Dispatcher.DispatchOptions,
  signal: AbortEmitter | undefined,
): Promise<UpstreamResponse> {
  const response = await dispatcher.request({ ...requestOptions, signal: signal ?? null });
  return {
    status: response.statusCode,
    headers: flattenHeaders(response.headers),
    body: response.body,
    cancel: () => response.body.destroy(),
  };
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** Turns a transport exception (refused, reset, timed out) into a failure the relay can act on. */
export function classifyTransportError(error: unknown): UpstreamFailure {
  const code = (error as { code?: string })?.code ?? (error as { cause?: { code?: string } })?.cause?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (
    (code && TIMEOUT_CODES.has(code)) ||
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError
  ) {
    return { kind: 'timeout', status: null, message: `upstream timed out (${code ?? 'timeout'})` };
  }
  return { kind: 'connection', status: null, message: `upstream connection failed: ${code ?? message}` };
}
