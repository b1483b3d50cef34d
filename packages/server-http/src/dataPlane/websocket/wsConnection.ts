/**
 * @module wsConnection
 * One open websocket: reads client messages and answers them. Credential
 * messages (`auth.upsert`, `auth.delete`) need the management key given on
 * upgrade, go through the credentials' auth update queue and are
 * acknowledged once applied. `response.create` (on `/v1/responses` only)
 * runs through the relay exactly as `POST /v1/responses` does, streaming
 * the Responses events back; several may be in flight, each aborted when
 * the socket closes. The socket remembers its latest responses, so that a
 * `previous_response_id` naming one works (Codex's incremental requests),
 * and answers a `generate: false` warm-up itself. A bad message gets an `error` message and the socket
 * stays open.
 */
import type { IncomingMessage } from 'node:http';
import type { ClientIdentity } from '@switchyard/core-routing';
import { CredentialsError, type RuntimeUpdate, type RuntimeUpdateResult } from '@switchyard/credentials';
import { presentedKey } from '@switchyard/http-kit';
import { AFFINITY_HEADER, type Relay, type RelayRequest } from '@switchyard/relay';
import { type ErrorInfo, openAiErrorBody } from '@switchyard/translate';
import type { EventEmitter } from 'eventemitter3';
import { WebSocket } from 'ws';
import { type ClientKeyGuard, type GuardedKey, looksLikeClientKey, refuseModel } from '../../clientKeys/clientKeyGuard.js';
import { checkBody } from '../ingressRoutes.js';
import type { ManagementCheck, WebsocketRoute } from './upgradeGate.js';
import {
  AuthDeleteMessageSchema,
  AuthUpsertMessageSchema,
  ackMessage,
  type ClientMessageType,
  errorMessage,
  type ReadMessage,
  ResponseCreateMessageSchema,
  readMessage,
  validateMessage,
  type WsErrorCode,
} from './wsMessages.js';
import { type WsOutlet, wsResponseSink } from './wsResponseSink.js';

/** The websocket events, as observability consumes them (`websocket:*`). */
export interface WebsocketEventMap {
  'websocket:open': [{ route: string; management: boolean; at: number }];
  'websocket:rejected': [{ route: string; status: number; reason: string; at: number }];
  'websocket:close': [{ route: string; code: number; durationMs: number; messagesIn: number; messagesOut: number; at: number }];
  'websocket:message': [{ route: string; direction: 'in' | 'out'; type: string }];
}

/** Where credential messages go: the credential manager's `submit`. */
export interface RuntimeCredentials {
  submit(update: RuntimeUpdate): Promise<RuntimeUpdateResult>;
}

/** What a connection needs; shared by every connection of a gateway. */
export interface WsConnectionDeps {
  relay: Relay;
  credentials: RuntimeCredentials;
  management: ManagementCheck;
  events: EventEmitter<WebsocketEventMap>;
  clock: { now(): number };
  /** `response.create` requests in flight per socket (read per request, so a reload applies). */
  maxInFlight(): number;
  /** Buffered bytes past which the relay stops reading upstream. */
  highWaterMark: number;
  /** Faults of the gateway's own (never a client's mistake). */
  logError(fields: Record<string, unknown>, message: string): void;
  /** Who holds the socket's client key, read per request (a reload may rename or re-tenant it), for accounting. */
  clientOf?(key: string | undefined): ClientIdentity | undefined;
  /** Runtime client keys: each `response.create` of a socket opened with one is held to its limits. */
  clientKeys?: ClientKeyGuard;
}

/** Completed responses a socket keeps for `previous_response_id`: a client chains on its latest one. */
const MAX_CONVERSATIONS = 4;

/** A Responses `input` as a list of items (a string is one user message). */
function inputItems(input: unknown): unknown[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  return Array.isArray(input) ? input : [];
}

/** Labels of outgoing messages: a fixed set, so metrics stay bounded. */
type OutKind = 'event' | 'error' | 'auth.ack';

/**
 * Serves one socket.
 *
 * @example
 * ```ts
 * const connection = new WsConnection(ws, req, { route: '/v1/responses', managementKey: undefined }, deps);
 * ```
 */
export class WsConnection implements WsOutlet {
  readonly route: WebsocketRoute;
  /** Set by the keepalive: cleared at each ping, set again by a pong or any message. */
  alive = true;
  private readonly ws: WebSocket;
  private readonly deps: WsConnectionDeps;
  private readonly managementKey: string | undefined;
  private readonly openedAt: number;
  private readonly inFlight = new Set<AbortController>();
  private drainWaiters: (() => void)[] = [];
  private messagesIn = 0;
  private messagesOut = 0;
  /**
   * The whole conversation of this socket's latest completed responses (their
   * input, then their output items), by response id: a `response.create` that
   * names one as `previous_response_id` (Codex sends only the new items that
   * way) is expanded into the full input here, so it works for every
   * provider, though the gateway keeps no state beyond the socket.
   */
  private readonly conversations = new Map<string, unknown[]>();
  private markClosed!: () => void;
  /** Resolves once the socket has closed. */
  readonly closed = new Promise<void>((resolve) => {
    this.markClosed = resolve;
  });
  /** What forwarding a request to another node needs from the upgrade request. */
  private readonly identity: Pick<RelayRequest, 'clientAuthorization' | 'affinity'>;
  /** The client key presented on upgrade, re-checked when `api-keys` changes. */
  readonly clientKey: string | undefined;

  constructor(
    ws: WebSocket,
    req: IncomingMessage,
    accepted: { route: WebsocketRoute; managementKey: string | undefined },
    deps: WsConnectionDeps,
  ) {
    this.ws = ws;
    this.deps = deps;
    this.route = accepted.route;
    this.managementKey = accepted.managementKey;
    this.openedAt = deps.clock.now();
    const key = presentedKey(req.headers);
    this.clientKey = key;
    const affinity = req.headers[AFFINITY_HEADER];
    this.identity = {
      ...(key ? { clientAuthorization: `Bearer ${key}` } : {}),
      ...(typeof affinity === 'string' && affinity.length > 0 ? { affinity: affinity.slice(0, 256) } : {}),
    };
    ws.on('message', (data, isBinary) => {
      this.alive = true;
      this.onMessage(isBinary ? undefined : data.toString());
    });
    ws.on('pong', () => {
      this.alive = true;
    });
    // An oversized or malformed frame: ws closes the socket (1009, 1002, …) and reports it here; nothing to add.
    ws.on('error', () => undefined);
    ws.on('close', (code) => this.onClose(code));
    deps.events.emit('websocket:open', { route: this.route, management: this.managementKey !== undefined, at: this.openedAt });
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** Requests in flight on this socket. */
  get requestsInFlight(): number {
    return this.inFlight.size;
  }

  send(text: string, kind: OutKind = 'event'): boolean {
    if (!this.open) return true;
    this.messagesOut++;
    this.deps.events.emit('websocket:message', { route: this.route, direction: 'out', type: kind });
    this.ws.send(text, () => this.wakeDrainWaiters());
    return this.ws.bufferedAmount < this.deps.highWaterMark;
  }

  drain(): Promise<void> {
    if (!this.open || this.ws.bufferedAmount < this.deps.highWaterMark) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Sends a ping; the keepalive drops the socket if no pong (or message) comes before the next one. */
  ping(): void {
    this.alive = false;
    if (this.open) this.ws.ping();
  }

  /** Closes the socket (`1001` when the gateway shuts down). */
  close(code: number, reason: string): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(code, reason);
  }

  /** Drops the socket at once. */
  terminate(): void {
    this.ws.terminate();
  }

  private wakeDrainWaiters(): void {
    if (this.drainWaiters.length === 0) return;
    if (this.open && this.ws.bufferedAmount >= this.deps.highWaterMark) return;
    for (const resolve of this.drainWaiters.splice(0)) resolve();
  }

  private onClose(code: number): void {
    // The client left: nobody will read the rest, so stop the upstream calls.
    for (const controller of this.inFlight) controller.abort();
    this.inFlight.clear();
    for (const resolve of this.drainWaiters.splice(0)) resolve();
    const at = this.deps.clock.now();
    this.deps.events.emit('websocket:close', {
      route: this.route,
      code,
      durationMs: at - this.openedAt,
      messagesIn: this.messagesIn,
      messagesOut: this.messagesOut,
      at,
    });
    this.markClosed();
  }

  private refuse(requestId: string | undefined, code: WsErrorCode, message: string, param?: string): void {
    this.send(errorMessage(requestId, code, message, param), 'error');
  }

  private onMessage(text: string | undefined) {
    this.messagesIn++;
    const read: ReadMessage =
      text === undefined
        ? { ok: false, requestId: undefined, code: 'invalid_message', message: 'send JSON text messages, not binary ones' }
        : readMessage(text);
    this.deps.events.emit('websocket:message', { route: this.route, direction: 'in', type: read.ok ? read.type : 'invalid' });
    if (!read.ok) return this.refuse(read.requestId, read.code, read.message, read.param);
    const handlers: Record<ClientMessageType, () => void> = {
      'response.create': () => this.createResponse(read.requestId, read.fields),
      'auth.upsert': () => void this.applyAuth(read.requestId, read.fields, 'auth.upsert'),
      'auth.delete': () => void this.applyAuth(read.requestId, read.fields, 'auth.delete'),
    };
    handlers[read.type]();
  }

  private async applyAuth(requestId: string | undefined, fields: Record<string, unknown>, type: 'auth.upsert' | 'auth.delete') {
    if (this.managementKey === undefined) {
      return this.refuse(requestId, 'management_key_required', `${type} needs the management key, given on upgrade as X-Management-Key`);
    }
    if (!this.deps.management.matches(this.managementKey)) {
      return this.refuse(requestId, 'management_key_revoked', 'the management key given on upgrade is no longer valid; reconnect');
    }
    let update: RuntimeUpdate;
    if (type === 'auth.upsert') {
      const checked = validateMessage(AuthUpsertMessageSchema, fields);
      if (!checked.ok) return this.refuse(requestId, 'invalid_message', checked.message, checked.param);
      update = { type, credential: checked.value.credential };
    } else {
      const checked = validateMessage(AuthDeleteMessageSchema, fields);
      if (!checked.ok) return this.refuse(requestId, 'invalid_message', checked.message, checked.param);
      update = { type, id: checked.value.id };
    }
    let applied: RuntimeUpdateResult;
    try {
      applied = await this.deps.credentials.submit(update);
    } catch (error) {
      // The credentials package's messages never hold a secret (see its messageOf).
      if (error instanceof CredentialsError) return this.refuse(requestId, error.code, error.message, error.field);
      this.deps.logError({ err: error, route: this.route, message_type: type }, 'websocket_auth_update_failed');
      return this.refuse(requestId, 'internal', 'the update could not be applied');
    }
    this.send(ackMessage(requestId, applied.id, applied.revision), 'auth.ack');
  }

  /**
   * `generate: false` (Codex's prewarm on connecting): nothing is asked of the
   * model, so nothing goes upstream; the answer is an empty completed
   * Response whose id the next `response.create` may chain on.
   */
  private warmUp(requestId: string | undefined, model: string, input: unknown[]): void {
    const response = {
      id: `resp_${crypto.randomUUID().replaceAll('-', '')}`,
      object: 'response',
      created_at: Math.floor(this.deps.clock.now() / 1000),
      status: 'completed',
      error: null,
      incomplete_details: null,
      model,
      output: [],
      usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    };
    const tag = requestId === undefined ? {} : { request_id: requestId };
    this.send(
      JSON.stringify({ type: 'response.created', sequence_number: 0, response: { ...response, status: 'in_progress' }, ...tag }),
      'event',
    );
    this.send(JSON.stringify({ type: 'response.completed', sequence_number: 1, response, ...tag }), 'event');
    this.remember(response, input);
  }

  /** Keeps a completed response's conversation for a later `previous_response_id` (the latest few only). */
  private remember(response: Record<string, unknown>, input: unknown[]): void {
    if (typeof response.id !== 'string' || !Array.isArray(response.output)) return;
    this.conversations.set(response.id, [...input, ...response.output]);
    while (this.conversations.size > MAX_CONVERSATIONS) this.conversations.delete(this.conversations.keys().next().value!);
  }

  /** An error for a `response.create` refused before the relay saw it, in the OpenAI error shape. */
  private refuseResponse(requestId: string | undefined, info: ErrorInfo): void {
    const { error } = openAiErrorBody(info) as { error: unknown };
    this.send(
      JSON.stringify({ type: 'error', ...(requestId === undefined ? {} : { request_id: requestId }), status: info.status, error }),
      'error',
    );
  }

  /** The runtime client key this socket was opened with, as the guard holds it now; undefined for any other key. */
  private runtimeKey(): GuardedKey | undefined {
    const guard = this.deps.clientKeys;
    return guard && looksLikeClientKey(this.clientKey) ? guard.identify(this.clientKey) : undefined;
  }

  /**
   * The checks a runtime key passes before anything else (warm-ups included): not revoked or expired, and
   * `model` in its list. A revoked or expired key is refused and the socket closed (1008), as a config key
   * dropped by a reload is; a model outside the list is refused and the socket stays open.
   */
  private keyMayUse(requestId: string | undefined, key: GuardedKey, model: string): boolean {
    const door = this.deps.clientKeys?.refuseAtDoor(key);
    const refusal = door ?? refuseModel(key, model);
    if (refusal === undefined) return true;
    this.refuseResponse(requestId, refusal);
    if (door) this.close(1008, 'API key no longer accepted');
    return false;
  }

  private createResponse(requestId: string | undefined, fields: Record<string, unknown>) {
    if (this.route !== '/v1/responses') {
      return this.refuse(requestId, 'unsupported_type', 'response.create is served on /v1/responses, not on /v1/ws', 'type');
    }
    const bad = (message: string, param?: string) =>
      this.refuseResponse(requestId, {
        status: 400,
        code: 'invalid_request',
        type: 'invalid_request_error',
        message,
        ...(param ? { param } : {}),
      });
    const checked = validateMessage(ResponseCreateMessageSchema, fields);
    if (!checked.ok) return bad(checked.message, checked.param);
    const { type: _type, request_id: _requestId, stream, background, ...rest } = checked.value;
    if (stream === false) return bad('stream is implied over a websocket; leave it out', 'stream');
    if (background === true) return bad('background responses are not served over a websocket', 'background');
    const body: Record<string, unknown> = { ...rest, stream: true };
    const history = typeof body.previous_response_id === 'string' ? this.conversations.get(body.previous_response_id) : undefined;
    if (history) {
      body.input = [...history, ...inputItems(body.input)];
      delete body.previous_response_id;
    }
    const route = { kind: 'generate', family: 'openai-responses', operation: 'generate' } as const;
    const problem = checkBody(route, body);
    if ('message' in problem) return bad(problem.message, problem.param);
    // Looked up per message: the key may have been revoked, or its limits changed, since the upgrade.
    const runtimeKey = this.runtimeKey();
    if (runtimeKey && !this.keyMayUse(requestId, runtimeKey, problem.model)) return;
    if (body.generate === false) return this.warmUp(requestId, problem.model, inputItems(body.input));
    if (this.inFlight.size >= this.deps.maxInFlight()) {
      return this.refuseResponse(requestId, {
        status: 429,
        code: 'too_many_requests',
        type: 'rate_limit_error',
        message: `this socket already has ${this.inFlight.size} responses in flight (server.websocket.max_in_flight)`,
      });
    }
    const controller = new AbortController();
    this.inFlight.add(controller);
    const client = this.deps.clientOf?.(this.clientKey);
    const request: RelayRequest = {
      requestId: crypto.randomUUID(),
      ingress: 'openai-responses',
      model: problem.model,
      stream: true,
      body,
      rawBody: Buffer.from(JSON.stringify(body)),
      signal: controller.signal,
      path: '/v1/responses',
      forwarded: false,
      ...(client ? { client } : {}),
      ...this.identity,
    };
    const relayed = () =>
      this.deps.relay.handle(
        request,
        wsResponseSink(this, requestId, controller.signal, (response) => this.remember(response, inputItems(body.input))),
      );
    const guard = this.deps.clientKeys;
    // A runtime key's rates and budget admit the request (nothing goes upstream when they refuse) and learn what it used.
    const done: Promise<unknown> =
      runtimeKey && guard
        ? guard.run(runtimeKey, problem.model, relayed).then((refusal) => {
            if (refusal) this.refuseResponse(requestId, refusal);
          })
        : relayed();
    done
      .catch((error) => {
        this.deps.logError({ err: error, request_id: request.requestId }, 'websocket_response_failed');
        this.refuseResponse(requestId, { status: 500, code: 'internal', type: 'server_error', message: 'internal error' });
      })
      .finally(() => this.inFlight.delete(controller));
  }
}
