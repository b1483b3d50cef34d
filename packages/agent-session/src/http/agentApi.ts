/**
 * @module agentApi
 * The agent session server's HTTP API on Hono with @hono/zod-openapi:
 * `/status`, `/messages`, `/message`, `/events`, `/upload`, `/screen`, and
 * the pages `/openapi.json`, `/docs` and `/chat`. It translates requests to
 * an {@link AgentSession} and results back; it decides nothing. Every error
 * has the control plane's shape `{"error": {"code", "message", "details"?}}`.
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  ApiError,
  type ApiErrorCode,
  bodyCap,
  createControlPlaneApp,
  fieldDetail,
  methodNotAllowedOrNotFound,
  respondError,
} from '@switchyard/http-kit';
import { type Scheduler, systemScheduler } from '@switchyard/runtime';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { type AgentSession, INPUT_LIMITS } from '../engine/agentSession.js';
import { AgentSessionError, type AgentSessionErrorCode } from '../engine/errors.js';
import { bearerKey, DEFAULT_ALLOWED_HOSTS, hostAllowlist, localCallersOnly, originPolicy } from './access.js';
import { EventHub, statusPayload } from './eventStream.js';
import { registerPages } from './pages/pages.js';
import {
  AgentMessageSchema,
  DialogSchema,
  ErrorBodySchema,
  MessagesResponseSchema,
  OkResponseSchema,
  PostDialogBodySchema,
  PostMessageBodySchema,
  ScreenResponseSchema,
  StatusResponseSchema,
  UploadResponseSchema,
} from './schemas.js';
import { DEFAULT_MAX_UPLOADS, DEFAULT_UPLOAD_DIR_LIMIT_BYTES, DEFAULT_UPLOAD_LIMIT_BYTES, storeUpload } from './uploads.js';

/** Options of {@link createAgentApi}. */
export interface AgentApiOptions {
  /** Hosts served (`Host` header): hostnames, `host:port` or `*` (default localhost, 127.0.0.1, ::1). */
  allowedHosts?: readonly string[];
  /** Origins allowed to call the API from a browser (`*` for any). Default: same origin only. */
  cors?: { origins: readonly string[] };
  /** When set, API routes need `Authorization: Bearer <apiKey>` (pages stay public; the chat page asks for the key). */
  apiKey?: string;
  /** Proxies whose forwarded headers are believed; a forwarded request from any other peer is remote. */
  trustedProxies?: readonly string[];
  /** Serve key-less callers that are not on this machine (`insecure` on a public bind); default false. */
  remoteCallers?: boolean;
  /** Receives security warnings (a forwarded request from an untrusted peer), at most one a minute. */
  onWarning?: (message: string) => void;
  /** Where `/upload` stores files. */
  uploadDir: string;
  /** Largest upload (default 10 MiB). */
  uploadLimitBytes?: number;
  /** Most files stored through `/upload` (default 1,000). */
  maxUploads?: number;
  /** Most bytes stored through `/upload` in all (default 100 MiB). */
  uploadDirLimitBytes?: number;
  /** Event-stream limits. */
  events?: { heartbeatMs?: number; maxSubscribers?: number };
  scheduler?: Scheduler;
}

/** The API and its event hub. */
export interface AgentApi {
  app: OpenAPIHono;
  events: EventHub;
  /** The OpenAPI 3.1 document served at `/openapi.json`. */
  openApiDocument(): Record<string, unknown>;
  /** Ends every event stream (call before closing the HTTP server). */
  close(): void;
}

const ENGINE_ERRORS: Record<AgentSessionErrorCode, ApiErrorCode> = {
  busy: 'conflict',
  dialog_open: 'conflict',
  no_dialog: 'conflict',
  invalid_input: 'validation_failed',
  not_supported: 'validation_failed',
  agent_exited: 'service_unavailable',
  closed: 'service_unavailable',
  start_failed: 'bad_gateway',
  protocol_error: 'bad_gateway',
  missing_dependency: 'service_unavailable',
};

const HTTP_STATUS_ERRORS: Record<number, ApiErrorCode> = { 400: 'bad_request', 413: 'payload_too_large', 415: 'unsupported_media_type' };

const JSON_BODY_LIMIT = 4 * INPUT_LIMITS.maxMessageBytes;

const errorResponse = (description: string) => ({ content: { 'application/json': { schema: ErrorBodySchema } }, description });
const json = <T extends z.ZodType>(schema: T, description: string) => ({ content: { 'application/json': { schema } }, description });

function handleError(error: unknown, c: Context): Response {
  if (error instanceof ApiError) return respondError(c, error.code, error.message, error.details, error.headers);
  if (error instanceof AgentSessionError) {
    const details = error.details ?? (error.field ? fieldDetail(error.field, error.message) : undefined);
    return respondError(c, ENGINE_ERRORS[error.code], error.message, details);
  }
  if (error instanceof HTTPException) {
    const code = HTTP_STATUS_ERRORS[error.status] ?? 'bad_request';
    return respondError(c, code, code === 'payload_too_large' ? 'the request body is too large' : error.message || 'bad request');
  }
  return respondError(c, 'internal', 'internal error');
}

function requireMediaType(c: Context, type: string): void {
  const header = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (header !== type)
    throw new ApiError('unsupported_media_type', `Content-Type must be ${type}${header ? `, not ${header}` : ''}`, {
      details: fieldDetail('content-type', `expected ${type}`),
    });
}

/**
 * Builds the agent session API over `session`.
 *
 * @example
 * ```ts
 * const api = createAgentApi(session, { uploadDir: '/tmp/agent-uploads' });
 * serve({ fetch: api.app.fetch, port: 3284, hostname: '127.0.0.1' });
 * ```
 */
export function createAgentApi(session: AgentSession, options: AgentApiOptions): AgentApi {
  const scheduler = options.scheduler ?? systemScheduler;
  const events = new EventHub(session, { scheduler, ...options.events });
  const uploadLimit = options.uploadLimitBytes ?? DEFAULT_UPLOAD_LIMIT_BYTES;
  const maxUploads = options.maxUploads ?? DEFAULT_MAX_UPLOADS;
  const uploadDirLimit = options.uploadDirLimitBytes ?? DEFAULT_UPLOAD_DIR_LIMIT_BYTES;
  /** What this server has stored in the upload directory. */
  const stored = { count: 0, bytes: 0 };
  const app = createControlPlaneApp();
  app.onError(handleError);
  // The CORS middleware answers OPTIONS on every path, so `Allow` names it beside the routes' methods.
  app.notFound(methodNotAllowedOrNotFound(app, ['OPTIONS']));
  // `insecure` on a public bind serves anyone who reaches it, by whatever name, as the gateway does.
  const defaultHosts = options.remoteCallers ? ['*'] : DEFAULT_ALLOWED_HOSTS;
  app.use('*', hostAllowlist(options.allowedHosts?.length ? options.allowedHosts : defaultHosts));
  if (!options.apiKey) app.use('*', localCallersOnly(options.trustedProxies ?? [], options.onWarning, options.remoteCallers));
  for (const middleware of originPolicy(options.cors?.origins ?? [])) app.use('*', middleware);
  if (options.apiKey)
    for (const path of ['/status', '/messages', '/message', '/dialog', '/events', '/upload', '/screen'])
      app.use(path, bearerKey(options.apiKey));
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  // The access rules answer before any route does, so every API route can answer these.
  const accessResponses = {
    403: errorResponse(
      'The Host header is not allowed (DNS-rebinding protection), or the request comes from an origin CORS does not allow',
    ),
    ...(options.apiKey ? { 401: errorResponse('A valid API key is required: `Authorization: Bearer <key>`') } : {}),
  };

  const statusBody = () =>
    statusPayload(session, { status: session.conversation.status, exited: session.exit, dialog: session.conversation.dialog });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/status',
      summary: 'The agent status',
      description:
        '`stable` when the screen has not changed for the stability window and no input is pending; `running` otherwise. While the agent shows a choice or confirmation, `dialog` carries its text and options: answer it with `POST /dialog`.',
      responses: { 200: json(StatusResponseSchema, 'The status'), ...accessResponses },
    }),
    (c) => c.json(statusBody(), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/messages',
      summary: 'The conversation so far',
      description: 'User messages as sent; agent messages as extracted from the screen (echo, prompt and input box stripped) or from ACP.',
      responses: { 200: json(MessagesResponseSchema, 'Every message, oldest first'), ...accessResponses },
    }),
    (c) => c.json({ messages: session.conversation.messages() }, 200),
  );

  app.use('/message', bodyCap(JSON_BODY_LIMIT, `the request body must be at most ${JSON_BODY_LIMIT} bytes`));
  app.use('/message', async (c, next) => {
    if (c.req.method === 'POST') requireMediaType(c, 'application/json');
    return next();
  });
  app.openapi(
    createRoute({
      method: 'post',
      path: '/message',
      summary: 'Send a message or keys',
      description:
        'A `user` message is typed as a bracketed paste followed by Enter and recorded; while the agent runs it is refused with 409. `raw` content goes to the terminal as it is, unrecorded, at any time (ACP: only Ctrl-C or Esc, which cancel the turn).',
      request: { body: { content: { 'application/json': { schema: PostMessageBodySchema } }, required: true } },
      responses: {
        200: json(OkResponseSchema, 'Handed to the agent'),
        400: errorResponse('The body is not valid JSON'),
        ...accessResponses,
        409: errorResponse(
          'The agent is running (code `conflict`; wait for `stable`), or shows a dialog (`details.dialog`: answer it with `POST /dialog` first)',
        ),
        413: errorResponse('The message is too large'),
        415: errorResponse('The body is not JSON'),
        422: errorResponse('The body is not valid (empty content, unknown type)'),
        503: errorResponse('The agent has exited'),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      if (body.type === 'user' && Buffer.byteLength(body.content, 'utf8') > INPUT_LIMITS.maxMessageBytes)
        throw new ApiError('payload_too_large', `content must be at most ${INPUT_LIMITS.maxMessageBytes} bytes`, {
          details: fieldDetail('content', 'too large'),
        });
      if (body.type === 'raw') await session.sendRaw(body.content);
      else await session.sendMessage(body.content);
      return c.json({ ok: true as const }, 200);
    },
  );

  app.use('/dialog', bodyCap(4096, 'the request body must be at most 4096 bytes'));
  app.use('/dialog', async (c, next) => {
    if (c.req.method === 'POST') requireMediaType(c, 'application/json');
    return next();
  });
  app.openapi(
    createRoute({
      method: 'post',
      path: '/dialog',
      summary: 'Answer the dialog the agent shows',
      description:
        'Picks option `option` (1-based, in the order of `dialog.options` in `/status`) of the choice or confirmation the agent shows, with the keys the dialog takes (arrow keys and Enter, or a letter and Enter). Raw messages remain a way to send keys of your own.',
      request: { body: { content: { 'application/json': { schema: PostDialogBodySchema } }, required: true } },
      responses: {
        200: json(OkResponseSchema, 'The keys were sent'),
        400: errorResponse('The body is not valid JSON'),
        ...accessResponses,
        409: errorResponse('The agent shows no dialog'),
        415: errorResponse('The body is not JSON'),
        422: errorResponse('`option` is not one of the dialog’s options'),
        503: errorResponse('The agent has exited'),
      },
    }),
    async (c) => {
      await session.answerDialog(c.req.valid('json').option);
      return c.json({ ok: true as const }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/events',
      summary: 'Live updates (Server-Sent Events)',
      description:
        'Events `message_update` (an AgentMessage, plus `message` = `content`), `status_change` (`{status, agent_type, transport}`, plus `exited` once the agent has ended and `dialog` while it shows one, as in `/status`; a dialog appearing or going is a `status_change`) `agent_error` (`{message, fatal, time}`); over ACP also `tool_call` (`{id, title, kind, status, content, locations, after_message, time}`, sent again as the call progresses), `plan` (`{id, entries: [{content, priority, status}], after_message, time}`), `agent_thought` (`{id, text, after_message, time}`, growing) and `permission` (`{outcome: requested|answered|granted|denied|timed_out|withdrawn, tool_call_id, title, options, chosen?, time}`). A new subscriber first gets every message, then the activities and permission steps, then the status. Send `Last-Event-ID` (or `?last_event_id=`) to resume: only what changed since is sent. Each read gets what changed since the previous one: a reader that falls behind gets each changed message once, in its current form, and is never cut for reading slowly.',
      request: {
        headers: z.object({
          'last-event-id': z.string().optional().openapi({ description: 'The id of the last frame received: resume after it.' }),
        }),
        query: z.object({
          last_event_id: z.string().optional().openapi({ description: 'The same, for clients that cannot set headers.' }),
        }),
      },
      responses: {
        200: { content: { 'text/event-stream': { schema: z.string() } }, description: 'An endless event stream' },
        ...accessResponses,
        429: errorResponse('Too many event and screen streams are open (Retry-After says when to try again)'),
      },
    }),
    (c) => {
      // Hono answers HEAD with the GET handler's headers and drops its body unread and uncancelled:
      // a stream opened for it would stay subscribed for as long as the server runs.
      if (c.req.method === 'HEAD') return new Response(null, { status: 200, headers: SSE_HEADERS }) as never;
      if (events.full) throw tooManyStreams(events.size);
      const stream = events.open(c.req.valid('header')['last-event-id'] ?? c.req.valid('query').last_event_id);
      return new Response(stream, { status: 200, headers: SSE_HEADERS }) as never;
    },
  );

  app.use('/upload', bodyCap(uploadLimit + 64 * 1024, `uploads must be at most ${uploadLimit} bytes`));
  app.openapi(
    createRoute({
      method: 'post',
      path: '/upload',
      summary: 'Store a file for the agent',
      description: `multipart/form-data with one \`file\` field (at most ${uploadLimit} bytes). The file is stored in the server's upload directory under a fresh name; the answer gives its path, to mention in a message.`,
      request: {
        body: {
          content: {
            'multipart/form-data': {
              // z.any() is optional to the document generator, but the route refuses a form without `file`.
              schema: z.object({ file: z.any().openapi({ type: 'string', format: 'binary' }) }).openapi({ required: ['file'] }),
            },
          },
          required: true,
        },
      },
      responses: {
        200: json(UploadResponseSchema, 'Stored'),
        400: errorResponse('The body is not valid multipart/form-data'),
        ...accessResponses,
        413: errorResponse('The file is too large'),
        415: errorResponse('The body is not multipart/form-data'),
        422: errorResponse('No `file` field'),
      },
    }),
    async (c) => {
      requireMediaType(c, 'multipart/form-data');
      const form = await c.req.parseBody();
      const file = form.file;
      if (!(file instanceof File))
        throw new AgentSessionError('invalid_input', 'a file is required in the "file" field', { field: 'file' });
      if (file.size > uploadLimit) throw new ApiError('payload_too_large', `uploads must be at most ${uploadLimit} bytes`);
      // The directory is bounded too: many small uploads must not fill the disk.
      if (stored.count >= maxUploads || stored.bytes + file.size > uploadDirLimit)
        throw new ApiError(
          'payload_too_large',
          `the upload directory is full (${stored.count} files, ${stored.bytes} bytes; at most ${maxUploads} files and ${uploadDirLimit} bytes)`,
        );
      stored.count++;
      stored.bytes += file.size;
      let path: string;
      try {
        path = await storeUpload(options.uploadDir, file.name, new Uint8Array(await file.arrayBuffer()));
      } catch (error) {
        stored.count--;
        stored.bytes -= file.size;
        throw error;
      }
      return c.json({ ok: true as const, path, size: file.size }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/screen',
      summary: 'The terminal screen (PTY transport)',
      description:
        'The visible rows as JSON; with `Accept: text/event-stream`, a stream of `screen` events instead, each with the same body: one at once, then one whenever the screen changed (a slow reader gets the latest screen, never a backlog).',
      responses: {
        200: {
          content: {
            'application/json': { schema: ScreenResponseSchema },
            'text/event-stream': { schema: z.string().openapi({ description: '`event: screen` frames; `data` is a ScreenResponse' }) },
          },
          description: 'The visible rows, or their stream',
        },
        ...accessResponses,
        404: errorResponse('No screen: the agent speaks ACP'),
        429: errorResponse('Too many event and screen streams are open (Retry-After says when to try again)'),
      },
    }),
    (c) => {
      const screen = session.screen();
      if (!screen) throw new ApiError('not_found', 'this agent has no screen: it speaks ACP');
      if (!(c.req.header('accept') ?? '').includes('text/event-stream')) return c.json(screen, 200);
      // As for /events: a HEAD must not open a stream nobody reads.
      if (c.req.method === 'HEAD') return new Response(null, { status: 200, headers: SSE_HEADERS }) as never;
      if (events.full) throw tooManyStreams(events.size);
      const stream = events.openScreen();
      if (!stream) throw new ApiError('not_found', 'this agent has no screen: it speaks ACP');
      return new Response(stream, { status: 200, headers: SSE_HEADERS }) as never;
    },
  );

  const openApiDocument = () =>
    app.getOpenAPI31Document({
      openapi: '3.1.0',
      info: {
        title: 'Switchyard agent session API',
        version: '1',
        description: `One interactive agent (${session.transport}, kind \`${session.agentType}\`) over HTTP. Errors are \`{"error": {"code", "message", "details"?}}\`. A method a path does not serve is \`405 method_not_allowed\`, with \`Allow\` listing the methods it does; only a path no route has is 404.`,
      },
      ...(options.apiKey ? { security: [{ bearer: [] }] } : {}),
    }) as unknown as Record<string, unknown>;
  app.openAPIRegistry.register('AgentMessage', AgentMessageSchema);
  app.openAPIRegistry.register('Dialog', DialogSchema);
  registerPages(app, { openApiDocument, apiKeyRequired: Boolean(options.apiKey) });
  return { app, events, openApiDocument, close: () => events.closeAll() };
}

/** The headers of an event stream: no caching, and no buffering by a proxy in front (nginx's `X-Accel-Buffering`). */
const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
} as const;

/** The refusal of a stream past the cap (429, with when to try again). */
function tooManyStreams(open: number): ApiError {
  return new ApiError(
    'too_many_requests',
    `${open} event and screen streams are open, the most this server keeps; close one or try again`,
    {
      headers: { 'retry-after': '5' },
    },
  );
}
