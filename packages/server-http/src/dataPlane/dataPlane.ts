/**
 * @module dataPlane
 * The relay routes on plain node:http: no framework, no request or
 * response conversion. Every client family has its routes: OpenAI chat
 * completions and Responses (`/v1/chat/completions`, `/v1/responses`),
 * Anthropic Messages (`/v1/messages`, `/v1/messages/count_tokens`) and
 * Gemini (`/v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent`, as SSE with `?alt=sse` or else as Google's
 * streamed JSON array, `:countTokens`), plus the model lists
 * (`/v1/models`, in Anthropic's shape when the request carries
 * `anthropic-version`, and `/v1beta/models`). The handler checks the client
 * key and the access rules and routes the request; the generate routes
 * (`generate.ts`) read and sanity-check the body and hand the request to the
 * relay, which writes the answer (or an error in the client's own format)
 * straight to the socket.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClientIdentity } from '@switchyard/core-routing';
import { type AccessPolicy, ApiKeySet, type ClientKeyEntry, type KeyIdentity, presentedKey } from '@switchyard/http-kit';
import type { Relay, RelayFailure } from '@switchyard/relay';
import type { ApiFamily } from '@switchyard/translate';
import { allowsModel, type ClientKeyGuard, type GuardedKey, looksLikeClientKey } from '../clientKeys/clientKeyGuard.js';
import { type GenerateContext, generate, sendFailure } from './generate.js';
import { familyOfPath, matchRoute } from './ingressRoutes.js';
import { modelEntry, modelList } from './modelLists.js';

/** Options of {@link createDataPlane}. */
export interface DataPlaneOptions {
  relay: Relay;
  /** Accepted client keys (`api-keys`); empty means open (unless `clientKeys` holds any). */
  apiKeys: readonly ClientKeyEntry[];
  /** Runtime client keys (`/v0/management/client-keys`) and their limits, checked in memory. */
  clientKeys?: ClientKeyGuard;
  /** Largest accepted request body (default 10 MiB). */
  maxBodyBytes?: number;
  /** Live per-provider statistics, served at `GET /v1/metrics/providers`. */
  providerStats?: () => unknown;
  /** Called with each authorized request the relay is about to take, before it starts (the tracer reads `traceparent`). */
  onRelayRequest?: (requestId: string, headers: IncomingMessage['headers']) => void;
  /**
   * Who may call without a key (when `apiKeys` is empty): the Host allowlist, Origin and content-type rules, and
   * the trusted proxies. Without it, a key-less data plane serves anyone (an embedder's own gate in front).
   */
  access?: DataPlaneAccess;
}

/** The access rules of a key-less data plane, built once per config. */
export interface DataPlaneAccess {
  policy: AccessPolicy;
  /** Serve key-less callers that are not on this machine (`--insecure` on a public bind). */
  remoteCallers: boolean;
  /** Told of a loopback peer that forwarded someone's request without being a trusted proxy. */
  onUntrustedForward?: (peer: string | undefined) => void;
}

/** Why a request was refused before any route ran: a status and words for the client's own error shape. */
export interface AccessDenial {
  status: 400 | 403 | 415;
  message: string;
}

/** A node:http handler for `/v1/*`; resolves true when it answered the request. */
export interface DataPlane {
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
  /** The largest request body it accepts, in bytes: a larger one is answered 413 before it is read. */
  readonly maxBodyBytes: number;
  /** Replaces the accepted client keys (config reload). */
  setApiKeys(keys: readonly ClientKeyEntry[]): void;
  /** Whether a client key passes the `api-keys` rule (the websocket upgrade checks it too). */
  acceptsClientKey(key: string | undefined): boolean;
  /** Who holds a client key, as the relay's events name them (undefined when `/v1` is open or the key is unknown). */
  clientOf(key: string | undefined): ClientIdentity | undefined;
  /** Replaces the key-less access rules (config reload). */
  setAccess(access: DataPlaneAccess | undefined): void;
  /**
   * The refusal a request earns from the access rules, or undefined: a key-less caller must be on this machine
   * and pass Host, Origin and content type; a websocket upgrade must pass Origin whatever authorized it.
   */
  accessDenial(req: IncomingMessage, options?: { upgrade?: boolean }): AccessDenial | undefined;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Whether a request path (without its query) is the data plane's: `/v1/*` and `/v1beta/*`. */
export function isDataPlanePath(path: string): boolean {
  return path.startsWith('/v1/') || path.startsWith('/v1beta/');
}

/** The client's request id when it is safe to echo, else a fresh one. */
export function requestIdOf(req: IncomingMessage, generate: () => string): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : generate();
}

/** A key from the config's `api-keys`, as the relay's events name its client. */
function staticClient(identity: KeyIdentity): ClientIdentity {
  return { keyId: `static:${identity.name}`, name: identity.name, tenant: identity.tenant };
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
  const guard = options.clientKeys;
  /** `/v1` is open only while no key of either kind exists. */
  const isOpen = () => keys.open && (guard === undefined || guard.size === 0);
  /** A runtime key (by its `sk-sy-` prefix and digest), else a config key's identity. */
  const identifyKey = (key: string | undefined): { runtime?: GuardedKey; identity?: KeyIdentity } => {
    const runtime = guard && looksLikeClientKey(key) ? guard.identify(key) : undefined;
    if (runtime) return { runtime };
    const identity = keys.open ? undefined : keys.identify(key);
    return identity ? { identity } : {};
  };
  let access = options.access;
  const maxBodyBytes = options.maxBodyBytes ?? 10 * 1024 * 1024;
  const { relay } = options;
  let modelsCreated = Math.floor(Date.now() / 1000);
  const relayTo: GenerateContext = { relay, guard, maxBodyBytes };

  /**
   * The model list, or one model. A runtime key with a model list sees only the models it may use: one it may
   * not is answered as unknown (404), as OpenAI answers a model the caller has no access to.
   */
  function listModels(
    res: ServerResponse,
    family: ApiFamily,
    requestId: string,
    id: string | undefined,
    runtimeKey: GuardedKey | undefined,
  ): void {
    const served = relay.models();
    const models = runtimeKey?.exactModels === undefined ? served : served.filter((model) => allowsModel(runtimeKey, model.id));
    if (id !== undefined) {
      const name = family === 'gemini' && id.startsWith('models/') ? id.slice(7) : id;
      const model = models.find((m) => m.id === name);
      if (!model) {
        sendFailure(
          res,
          family,
          {
            status: 404,
            code: 'model_not_found',
            type: 'not_found_error',
            message:
              models === served
                ? `no provider serves the model ${JSON.stringify(name)}`
                : `the model ${JSON.stringify(name)} does not exist or this API key may not use it`,
            param: 'model',
          },
          requestId,
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': requestId });
      res.end(JSON.stringify(modelEntry(family, model, modelsCreated)));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': requestId });
    res.end(JSON.stringify(modelList(family, models, modelsCreated)));
  }

  /** Only header reads per request: the policy was built with the config. */
  function accessDenial(req: IncomingMessage, denialOptions: { upgrade?: boolean } = {}): AccessDenial | undefined {
    if (access === undefined) return undefined;
    const open = isOpen();
    if (!open && !denialOptions.upgrade) return undefined;
    const { policy } = access;
    if (open && !access.remoteCallers) {
      const peer = req.socket.remoteAddress;
      if (!policy.callerIsLocal(peer, req.headers)) {
        const forwarded = policy.forwardedByUntrustedPeer(peer, req.headers);
        if (forwarded) access.onUntrustedForward?.(peer);
        return {
          status: 403,
          message: forwarded
            ? 'this gateway has no api-keys, so it serves only callers on this machine, and this request was forwarded for another (a reverse proxy not in remote-management.trusted-proxies); set api-keys to serve others'
            : 'this gateway has no api-keys, so it serves only callers on this machine; set api-keys to serve others',
        };
      }
    }
    const refusal = policy.check({
      method: req.method ?? 'GET',
      headers: req.headers,
      authorization: open ? 'loopback' : 'key',
      ...(denialOptions.upgrade ? { upgrade: true } : {}),
    });
    return refusal && { status: refusal.status, message: refusal.message };
  }

  return {
    maxBodyBytes,
    acceptsClientKey(key) {
      if (isOpen()) return true;
      const { runtime, identity } = identifyKey(key);
      return identity !== undefined || (runtime !== undefined && guard?.refuseAtDoor(runtime) === undefined);
    },
    clientOf(key) {
      if (isOpen()) return undefined;
      const { runtime, identity } = identifyKey(key);
      return runtime?.client ?? (identity && staticClient(identity));
    },
    setApiKeys(next) {
      keys = new ApiKeySet(next);
      modelsCreated = Math.floor(Date.now() / 1000);
    },
    setAccess(next) {
      access = next;
    },
    accessDenial,
    async handle(req, res) {
      const url = req.url ?? '/';
      const [path = '/', search = ''] = url.split('?', 2);
      if (!isDataPlanePath(path)) return false;
      const requestId = requestIdOf(req, () => crypto.randomUUID());
      const family = familyOfPath(path, req.headers);
      const query = new URLSearchParams(search);
      // Gemini's REST clients may put the key in the query string.
      const key = presentedKey(req.headers) ?? (family === 'gemini' ? (query.get('key') ?? undefined) : undefined);
      const open = isOpen();
      const { runtime, identity } = open ? {} : identifyKey(key);
      const refusal: RelayFailure | undefined =
        open || identity
          ? undefined
          : runtime
            ? guard?.refuseAtDoor(runtime)
            : { status: 401, code: 'invalid_api_key', type: 'authentication_error', message: 'missing or invalid API key' };
      if (refusal) {
        sendFailure(res, family, refusal, requestId);
        return true;
      }
      const denial = open ? accessDenial(req) : undefined;
      if (denial) {
        const { status, message } = denial;
        const failure: RelayFailure =
          status === 403
            ? { status, code: 'forbidden', type: 'permission_error', message }
            : { status, code: 'invalid_request', type: 'invalid_request_error', message };
        sendFailure(res, family, failure, requestId);
        return true;
      }
      if (path === '/v1/metrics/providers' && req.method === 'GET' && options.providerStats) {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-request-id': requestId });
        res.end(JSON.stringify(options.providerStats()));
        return true;
      }
      const route = matchRoute(req.method ?? 'GET', path, query, family);
      if (!route) {
        sendFailure(
          res,
          family,
          { status: 404, code: 'not_found', type: 'not_found_error', message: `no route for ${req.method} ${path}` },
          requestId,
        );
        return true;
      }
      switch (route.kind) {
        case 'method_not_allowed':
          res.setHeader('allow', route.allow);
          sendFailure(
            res,
            family,
            {
              status: 405,
              code: 'invalid_request',
              type: 'invalid_request_error',
              message: `${req.method} is not allowed here; use ${route.allow}`,
            },
            requestId,
          );
          return true;
        case 'bad_path':
          sendFailure(
            res,
            family,
            {
              status: 400,
              code: 'invalid_request',
              type: 'invalid_request_error',
              message: route.message,
              ...(route.param ? { param: route.param } : {}),
            },
            requestId,
          );
          return true;
        case 'models':
          listModels(res, route.family, requestId, route.id, runtime);
          return true;
        default:
          options.onRelayRequest?.(requestId, req.headers);
          await generate(relayTo, req, res, route, requestId, key, runtime?.client ?? (identity && staticClient(identity)), runtime);
          return true;
      }
    },
  };
}
