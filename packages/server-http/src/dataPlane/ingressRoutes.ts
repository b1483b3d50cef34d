/**
 * @module ingressRoutes
 * Which API family a `/v1/*` or `/v1beta/*` request speaks, from its method
 * and path, and the checks each family's body must pass before the relay
 * sees it. The checks are the ones the gateway needs (a model, a message
 * list, a boolean `stream`); field-by-field validation happens in the
 * translators (naming the field) or at the provider, in pass-through.
 */
import type { ApiFamily } from '@switchyard/translate';

/** A route of the data plane. */
export type IngressRoute =
  | {
      kind: 'generate';
      family: ApiFamily;
      operation: 'generate' | 'count_tokens';
      model?: string;
      stream?: boolean;
      /** Gemini without `alt=sse`: the stream goes out as one JSON array. */
      jsonArray?: boolean;
    }
  | { kind: 'models'; family: ApiFamily; id?: string }
  | { kind: 'method_not_allowed'; family: ApiFamily; allow: string }
  | { kind: 'bad_path'; family: ApiFamily; message: string; param?: string };

const GEMINI_MODEL_ACTION = /^\/v1beta\/models\/([^/:]+):([A-Za-z]+)$/;
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,199}$/;

/** The family a path belongs to (for errors before a route is known, like a missing key). */
export function familyOfPath(path: string, headers: Record<string, string | string[] | undefined>): ApiFamily {
  if (path.startsWith('/v1beta/')) return 'gemini';
  if (path === '/v1/messages' || path.startsWith('/v1/messages/')) return 'anthropic-messages';
  if (path === '/v1/responses' || path.startsWith('/v1/responses/')) return 'openai-responses';
  if (path.startsWith('/v1/models') && headers['anthropic-version'] !== undefined) return 'anthropic-messages';
  return 'openai-chat';
}

function post(method: string, family: ApiFamily, route: IngressRoute): IngressRoute {
  return method === 'POST' ? route : { kind: 'method_not_allowed', family, allow: 'POST' };
}

/** The route for a request, or undefined when no route matches. */
export function matchRoute(method: string, path: string, query: URLSearchParams, family: ApiFamily): IngressRoute | undefined {
  switch (path) {
    case '/v1/chat/completions':
      return post(method, family, { kind: 'generate', family: 'openai-chat', operation: 'generate' });
    case '/v1/responses':
      return post(method, family, { kind: 'generate', family: 'openai-responses', operation: 'generate' });
    case '/v1/messages':
      return post(method, family, { kind: 'generate', family: 'anthropic-messages', operation: 'generate' });
    case '/v1/messages/count_tokens':
      return post(method, family, { kind: 'generate', family: 'anthropic-messages', operation: 'count_tokens' });
    case '/v1/models':
    case '/v1beta/models':
      return method === 'GET' ? { kind: 'models', family } : { kind: 'method_not_allowed', family, allow: 'GET' };
  }
  if (path.startsWith('/v1/models/') && method === 'GET')
    return { kind: 'models', family, id: decodeURIComponent(path.slice('/v1/models/'.length)) };
  const action = GEMINI_MODEL_ACTION.exec(path);
  if (action) {
    const model = decodeURIComponent(action[1]!);
    if (!MODEL_NAME.test(model))
      return { kind: 'bad_path', family, message: `${JSON.stringify(model)} is not a model name`, param: 'model' };
    switch (action[2]) {
      case 'generateContent':
        return post(method, family, { kind: 'generate', family: 'gemini', operation: 'generate', model, stream: false });
      case 'streamGenerateContent':
        return post(method, family, {
          kind: 'generate',
          family: 'gemini',
          operation: 'generate',
          model,
          stream: true,
          jsonArray: query.get('alt') !== 'sse',
        });
      case 'countTokens':
        return post(method, family, { kind: 'generate', family: 'gemini', operation: 'count_tokens', model, stream: false });
      default:
        return undefined;
    }
  }
  if (path.startsWith('/v1beta/models/') && method === 'GET')
    return { kind: 'models', family, id: decodeURIComponent(path.slice('/v1beta/models/'.length)) };
  return undefined;
}

/** A body problem: the message and the field at fault. */
export interface BodyProblem {
  message: string;
  param?: string;
}

/**
 * The longest model name accepted. Real names are a few dozen characters; a
 * name goes into routing, cache keys, logs and metric labels, so a client
 * cannot make any of those pay for a megabyte of it.
 */
export const MAX_MODEL_LENGTH = 256;

const modelTooLong = (length: number): BodyProblem => ({
  message: `model must be at most ${MAX_MODEL_LENGTH} characters (got ${length})`,
  param: 'model',
});

/** Checks the parts of a body the gateway itself relies on; returns the model and stream flag, or the problem. */
export function checkBody(
  route: Extract<IngressRoute, { kind: 'generate' }>,
  body: Record<string, unknown>,
): { model: string; stream: boolean } | BodyProblem {
  if (route.family === 'gemini') {
    const inner =
      route.operation === 'count_tokens' && typeof body.generateContentRequest === 'object' ? body.generateContentRequest : body;
    const contents = (inner as Record<string, unknown> | null)?.contents;
    if (!Array.isArray(contents)) return { message: 'contents is required and must be an array', param: 'contents' };
    return { model: route.model!, stream: route.stream === true };
  }
  if (typeof body.model !== 'string' || body.model.length === 0)
    return { message: 'model is required and must be a non-empty string', param: 'model' };
  if (body.model.length > MAX_MODEL_LENGTH) return modelTooLong(body.model.length);
  if (body.stream !== undefined && typeof body.stream !== 'boolean') return { message: 'stream must be a boolean', param: 'stream' };
  if (route.family === 'openai-responses') {
    if (body.input !== undefined && typeof body.input !== 'string' && !Array.isArray(body.input))
      return { message: 'input must be a string or an array of items', param: 'input' };
  } else if (!Array.isArray(body.messages)) return { message: 'messages is required and must be an array', param: 'messages' };
  if (
    route.family === 'anthropic-messages' &&
    body.max_tokens !== undefined &&
    !(Number.isInteger(body.max_tokens) && (body.max_tokens as number) > 0)
  )
    return { message: 'max_tokens must be a positive integer', param: 'max_tokens' };
  if (route.operation === 'count_tokens' && body.stream === true) return { message: 'token counts are not streamed', param: 'stream' };
  return { model: body.model, stream: body.stream === true };
}
