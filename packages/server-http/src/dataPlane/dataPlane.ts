/**
 * @module dataPlane
 * The `/v1/*` relay routes on plain node:http: no framework, no request or
 * response conversion. The handler checks the client key, reads and
 * sanity-checks the body, and hands the request to the relay, which writes
 * the answer (or an error in the client's own format) straight to the
 * socket.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  AFFINITY_HEADER,
  type ApiFamily,
  FORWARDED_HEADER,
  ingressFormat,
  nodeResponseSink,
  type Relay,
  type RelayFailure,
  type RelayRequest,
} from '@switchyard/core-routing';
import { ApiKeySet, presentedKey } from './apiKeys.js';
import { BodyTooLarge, readBody } from './readBody.js';

/** Options of {@link createDataPlane}. */
export interface DataPlaneOptions {
  relay: Relay;
  /** Accepted client keys (`api-keys`); empty means open. */
  apiKeys: readonly string[];
  /** Largest accepted request body (default 10 MiB). */
  maxBodyBytes?: number;
  /** Live per-provider statistics, served at `GET /v1/metrics/providers`. */
  providerStats?: () => unknown;
}

/** A node:http handler for `/v1/*`; resolves true when it answered the request. */
export interface DataPlane {
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /** Replaces the accepted client keys (config reload). */
  setApiKeys(keys: readonly string[]): void;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's request id when it is safe to echo, else a fresh one. */
export function requestIdOf(req: IncomingMessage, generate: () => string): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : generate();
}

function sendFailure(res: ServerResponse, family: ApiFamily, failure: RelayFailure, requestId: string): void {
  const { body, headers } = ingressFormat(family).errorResponse(failure);
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
  const traceparent = req.headers.traceparent;
  if (typeof traceparent === 'string') out.traceparent = traceparent;
  return out;
}

/**
 * Creates the data-plane handler.
 *
 * @example
 * ```ts
 * const dataPlane = createDataPlane({ relay, apiKeys: ['sk-local-1'] });
 * http.createServer(async (req, res) => {
 *   if (!(await dataPlane.handle(req, res))) { res.writeHead(404).end(); }
 * });
 * ```
 */
export function createDataPlane(options: DataPlaneOptions): DataPlane {
  let keys = new ApiKeySet(options.apiKeys);
  const maxBodyBytes = options.maxBodyBytes ?? 10 * 1024 * 1024;
  const { relay } = options;
  let modelsCreated = Math.floor(Date.now() / 1000);

  async function chatCompletions(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const family: ApiFamily = 'openai-chat';
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
      rawBody = await readBody(req, maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyTooLarge) return bad(error.message, undefined, 413);
      throw error;
    }
    let body: unknown;
    try {
      body = JSON.parse(rawBody.toString('utf8'));
    } catch {
      return bad('the request body is not valid JSON');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return bad('the request body must be a JSON object');
    const fields = body as Record<string, unknown>;
    if (typeof fields.model !== 'string' || fields.model.length === 0)
      return bad('model is required and must be a non-empty string', 'model');
    if (!Array.isArray(fields.messages)) return bad('messages is required and must be an array', 'messages');
    if (fields.stream !== undefined && typeof fields.stream !== 'boolean') return bad('stream must be a boolean', 'stream');
    const controller = new AbortController();
    // The client leaving before the answer is complete aborts the upstream call.
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    const request: RelayRequest = {
      requestId,
      ingress: family,
      model: fields.model,
      stream: fields.stream === true,
      body: fields,
      rawBody,
      headers: forwardedHeaders(req),
      noCache: wantsNoCache(req),
      signal: controller.signal,
      path: '/v1/chat/completions',
      forwarded: typeof req.headers[FORWARDED_HEADER] === 'string',
      ...clientIdentity(req),
    };
    await relay.handle(request, nodeResponseSink(res));
  }

  function listModels(res: ServerResponse, requestId: string): void {
    const data = relay
      .models()
      .map((m) => ({ id: m.id, object: 'model', created: modelsCreated, owned_by: m.providers[0] ?? 'switchyard' }));
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': requestId });
    res.end(JSON.stringify({ object: 'list', data }));
  }

  return {
    setApiKeys(next) {
      keys = new ApiKeySet(next);
      modelsCreated = Math.floor(Date.now() / 1000);
    },
    async handle(req, res) {
      const url = req.url ?? '/';
      const path = url.split('?', 1)[0]!;
      if (!path.startsWith('/v1/')) return false;
      const requestId = requestIdOf(req, () => crypto.randomUUID());
      if (!keys.accepts(presentedKey(req.headers))) {
        sendFailure(
          res,
          'openai-chat',
          { status: 401, code: 'invalid_api_key', type: 'authentication_error', message: 'missing or invalid API key' },
          requestId,
        );
        return true;
      }
      if (path === '/v1/chat/completions') {
        if (req.method !== 'POST') {
          res.setHeader('allow', 'POST');
          sendFailure(
            res,
            'openai-chat',
            { status: 405, code: 'invalid_request', type: 'invalid_request_error', message: `${req.method} is not allowed here; use POST` },
            requestId,
          );
          return true;
        }
        await chatCompletions(req, res, requestId);
        return true;
      }
      if (path === '/v1/models' && req.method === 'GET') {
        listModels(res, requestId);
        return true;
      }
      if (path === '/v1/metrics/providers' && req.method === 'GET' && options.providerStats) {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-request-id': requestId });
        res.end(JSON.stringify(options.providerStats()));
        return true;
      }
      sendFailure(
        res,
        'openai-chat',
        { status: 404, code: 'not_found', type: 'not_found_error', message: `no route for ${req.method} ${path}` },
        requestId,
      );
      return true;
    },
  };
}
