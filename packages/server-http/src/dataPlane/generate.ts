/**
 * @module generate
 * The generate routes of the data plane (chat completions, Responses,
 * Messages, Gemini's generateContent, the token counts): the body is read
 * within its limit and checked, the relay request is built from it and the
 * client's headers and connection, and the relay answers it, through the
 * client-key guard when a runtime key made the request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ClientIdentity } from '@switchyard/core-routing';
import { presentedKey } from '@switchyard/http-kit';
import {
  AFFINITY_HEADER,
  FORWARDED_HEADER,
  ingressFormat,
  nodeResponseSink,
  type Relay,
  type RelayFailure,
  type RelayRequest,
} from '@switchyard/relay';
import type { ApiFamily } from '@switchyard/translate';
import type { ClientKeyGuard, GuardedKey } from '../clientKeys/clientKeyGuard.js';
import { checkBody, type IngressRoute } from './ingressRoutes.js';
import { jsonArraySink } from './jsonArraySink.js';
import { BodyTooLarge, readBody } from './readBody.js';

/** What a generate request is relayed through. */
export interface GenerateContext {
  relay: Relay;
  /** The runtime client keys; a request made with one runs under its limits. */
  guard: ClientKeyGuard | undefined;
  /** Largest accepted request body, in bytes. */
  maxBodyBytes: number;
}

/** A failure in the client's own format (OpenAI, Anthropic, Gemini), with the request id. */
export function sendFailure(res: ServerResponse, family: ApiFamily, failure: RelayFailure, requestId: string): void {
  const { body, headers } = ingressFormat(family).errorResponse(failure, requestId);
  res.writeHead(failure.status, { ...headers, 'x-request-id': requestId });
  res.end(body);
}

/** What forwarding to another node needs from the client: its key and its affinity. */
function clientIdentity(req: IncomingMessage): { clientAuthorization?: string; affinity?: string } {
  const key = presentedKey(req.headers);
  const affinity = req.headers[AFFINITY_HEADER];
  return {
    ...(key ? { clientAuthorization: `Bearer ${key}` } : {}),
    ...(typeof affinity === 'string' && affinity.length > 0 ? { affinity: affinity.slice(0, 256) } : {}),
  };
}

function wantsNoCache(req: IncomingMessage): boolean {
  const control = req.headers['cache-control'] ?? '';
  return /\bno-(cache|store)\b/i.test(control) || req.headers['x-switchyard-cache'] === 'bypass';
}

/** Fields worth passing on to a provider (never the client's credentials). */
function forwardedHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['traceparent', 'anthropic-beta'] as const) {
    const value = req.headers[name];
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}

const connectionSignals = new WeakMap<Socket, AbortSignal>();

/**
 * A signal that aborts when the client's connection closes: the client leaving before its answer is
 * complete aborts the upstream call. One per connection, not per request: an HTTP/1.1 connection
 * carries its requests one after another, a request dies only with its connection, and an
 * AbortSignal costs microseconds to create.
 */
function connectionSignal(socket: Socket): AbortSignal {
  let signal = connectionSignals.get(socket);
  if (signal === undefined) {
    const controller = new AbortController();
    signal = controller.signal;
    if (socket.destroyed) controller.abort();
    else socket.once('close', () => controller.abort());
    connectionSignals.set(socket, signal);
  }
  return signal;
}

/** Reads, checks and relays one generate request; the relay (or a refusal) answers it. */
export async function generate(
  relayTo: GenerateContext,
  req: IncomingMessage,
  res: ServerResponse,
  route: Extract<IngressRoute, { kind: 'generate' }>,
  requestId: string,
  clientKey: string | undefined,
  client: ClientIdentity | undefined,
  runtimeKey: GuardedKey | undefined,
): Promise<void> {
  const family = route.family;
  const bad = (message: string, param?: string, status = 400) =>
    sendFailure(
      res,
      family,
      {
        status,
        code: status === 413 ? 'payload_too_large' : 'invalid_request',
        type: 'invalid_request_error',
        message,
        ...(param ? { param } : {}),
      },
      requestId,
    );
  const contentType = req.headers['content-type'];
  if (contentType !== undefined && !/^application\/(.+\+)?json\b/i.test(contentType)) {
    return bad(`content-type must be application/json, got ${contentType}`, undefined, 415);
  }
  let rawBody: Buffer;
  try {
    rawBody = await readBody(req, relayTo.maxBodyBytes);
  } catch (error) {
    if (error instanceof BodyTooLarge) return bad(error.message, undefined, 413);
    // Anything else is the client gone mid-body (it left, or node:http's request timeout cut off a body
    // that trickled in): nobody is left to answer, and it is no failure of the gateway's to log as one.
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return bad('the request body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return bad('the request body must be a JSON object');
  const fields = body as Record<string, unknown>;
  const checked = checkBody(route, fields);
  if ('message' in checked) return bad(checked.message, checked.param);
  const request: RelayRequest = {
    requestId,
    ingress: family,
    model: checked.model,
    stream: checked.stream,
    body: fields,
    rawBody,
    headers: forwardedHeaders(req),
    noCache: wantsNoCache(req),
    // The response cache keeps each client's answers apart.
    cacheScope: clientKey ?? '',
    ...(client ? { client } : {}),
    signal: connectionSignal(req.socket),
    ...(route.operation === 'count_tokens' ? { operation: 'count_tokens' as const } : {}),
    // Failover forwards the request to another node on the very route it came in on.
    path: req.url ?? '/',
    forwarded: typeof req.headers[FORWARDED_HEADER] === 'string',
    ...clientIdentity(req),
  };
  const sink = nodeResponseSink(res);
  const { relay, guard } = relayTo;
  const relayed = () => relay.handle(request, route.jsonArray ? jsonArraySink(sink) : sink);
  if (runtimeKey === undefined || guard === undefined) {
    await relayed();
    return;
  }
  const refusal = await guard.run(runtimeKey, checked.model, relayed);
  if (refusal) sendFailure(res, family, refusal, requestId);
}
