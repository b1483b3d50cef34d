/**
 * @module exchange
 * Decides, for one attempt, how the client's request reaches the provider
 * and how the answer comes back. When the client and the provider speak the
 * same family, the bytes pass through untouched (the fast path: no parse,
 * no re-serialization, a byte-level stream tap). Otherwise the request, the
 * answer, the stream and the errors are translated.
 */

import type { ChatRequest, ChatResponse, DecodeContext, EncodeContext, EncodeRequestOptions } from '@switchyard/translate';
import {
  aggregateStream,
  codecFor,
  describeUpstreamError,
  responsesToolsOf,
  StreamTranslator,
  TranslationError,
  translateRequest,
} from '@switchyard/translate';
import type { Json } from '@switchyard/translate/wire';
import { countTokensBody, countTokensResponse, estimateInputTokens } from './countTokens.js';
import type { ProviderAdapter, WireCodec } from './providers/adapter.js';
import { passThroughTap, type StreamTap, TranslatingTap } from './streamTap.js';
import type { ApiFamily, ProviderConfig, RelayCredential, RelayRequest, UpstreamFailure, UpstreamRequest, Usage } from './types.js';

/** How one attempt talks to its provider. */
export interface Exchange {
  /** The upstream request (absent when the answer is made locally). */
  request: UpstreamRequest | undefined;
  /** True when the answer is translated from another family. */
  translated: boolean;
  /** Headers for the client's response (`x-switchyard-dropped-fields`, …). */
  headers: Record<string, string>;
  /** A fresh tap for a streamed answer. */
  createTap(): StreamTap;
  /** The client's body for a complete upstream body; throws when the upstream's body is unreadable. */
  completeBody(body: Buffer, contentType: string): { body: Uint8Array | string; contentType: string; usage: Usage | undefined };
  /** The upstream's client error (4xx) in the client's family. */
  clientError(failure: UpstreamFailure): UpstreamFailure;
  /** An answer made without calling upstream (a token count the provider cannot give). */
  local?: { status: number; headers: Record<string, string>; body: string };
}

/** What an exchange is prepared from. */
export interface ExchangeInput {
  request: RelayRequest;
  adapter: ProviderAdapter;
  provider: ProviderConfig;
  credential: RelayCredential | undefined;
  upstreamModel: string;
  now: number;
}

/** The upstream answered 200 with a body the gateway cannot read. */
export class UnreadableUpstreamBody extends Error {
  override name = 'UnreadableUpstreamBody';
}

const JSON_TYPE = 'application/json';

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new UnreadableUpstreamBody('upstream sent invalid JSON', { cause: error });
  }
}

function droppedHeader(dropped: string[]): Record<string, string> {
  if (dropped.length === 0) return {};
  // The paths name the client's own fields, so they may hold anything: keep the header printable ASCII, and short.
  const value = [...new Set(dropped)].join(', ').replace(/[^\x20-\x7e]/g, '?');
  return { 'x-switchyard-dropped-fields': value.length > 1024 ? `${value.slice(0, 1019)}, ...` : value };
}

/** A client-error failure whose body is already in the client's family. */
export function clientFailure(family: ApiFamily, error: TranslationError, requestId: string): UpstreamFailure {
  const body = codecFor(family).errorBody(
    {
      status: 400,
      code: error.code,
      message: error.message,
      type: 'invalid_request_error',
      ...(error.param ? { param: error.param } : {}),
    },
    requestId,
  );
  return {
    kind: 'client',
    status: 400,
    message: error.message,
    body: Buffer.from(JSON.stringify(body)),
    headers: { 'content-type': JSON_TYPE },
  };
}

function rewriteClientError(family: ApiFamily, failure: UpstreamFailure, requestId: string): UpstreamFailure {
  let described: ReturnType<typeof describeUpstreamError>;
  try {
    described =
      failure.body && failure.body.length > 0 ? describeUpstreamError(JSON.parse(Buffer.from(failure.body).toString('utf8'))) : undefined;
  } catch {
    described = undefined;
  }
  const status = failure.status ?? 400;
  const body = codecFor(family).errorBody(
    {
      status,
      code: described?.code ?? 'upstream_error',
      message: described?.message ?? failure.message,
      type: 'invalid_request_error',
      upstreamStatus: status,
      ...(described?.param ? { param: described.param } : {}),
    },
    requestId,
  );
  return { ...failure, body: Buffer.from(JSON.stringify(body)), headers: { 'content-type': JSON_TYPE } };
}

function buildInput(input: ExchangeInput, body: Json, rawBody: Uint8Array) {
  const { request } = input;
  return {
    body,
    rawBody,
    upstreamModel: input.upstreamModel,
    stream: request.stream,
    ...(request.headers ? { headers: request.headers } : {}),
  };
}

function decodeContext(input: ExchangeInput): DecodeContext {
  return { model: input.upstreamModel, stream: input.request.stream, hostedTools: input.provider.hostedTools ?? 'drop' };
}

/** What the client's answer is written with: its namespaced functions go back into their namespaces. */
function encodeContext(input: ExchangeInput, neutral: ChatRequest): EncodeContext {
  const context: EncodeContext = { model: input.request.model, requestId: input.request.requestId, now: input.now };
  const namespaces = responsesToolsOf(neutral);
  if (namespaces) context.responsesTools = namespaces;
  return context;
}

/** Prepares one attempt. Throws {@link TranslationError} when the request cannot be expressed for this provider. */
export function prepareExchange(input: ExchangeInput): Exchange {
  if (input.request.operation === 'count_tokens') return countTokensExchange(input);
  if (input.adapter.wire) return wireExchange(input, input.adapter.wire);
  const { request, adapter, provider, credential } = input;
  const ingress = request.ingress;
  const family = adapter.family;
  if (family === 'custom') throw new Error(`provider kind ${adapter.kind} declares a custom wire format but has no codec`);
  if (family === ingress) {
    return {
      request: adapter.buildRequest(provider, credential, buildInput(input, request.body, request.rawBody)),
      translated: false,
      headers: {},
      createTap: () =>
        passThroughTap(ingress, {
          stripUsageOnlyChunks: (request.body.stream_options as { include_usage?: unknown } | undefined)?.include_usage !== true,
          usageOf: adapter.usageFromEvent,
        }),
      completeBody(body, contentType) {
        // Parsed whatever its media type: every route relayed here answers JSON, and a 200 that is not (a
        // proxy's HTML page, a captive portal) is a broken answer to try elsewhere, never one to pass on.
        const usage = adapter.usageFromResponse(parseJson(body));
        return { body, contentType: contentType.includes('json') ? contentType : JSON_TYPE, usage };
      },
      clientError: (failure) => failure,
    };
  }
  const options: EncodeRequestOptions = adapter.encodeOptions?.(provider) ?? {};
  const translated = translateRequest(ingress, family, request.body, decodeContext(input), options);
  const rawBody = Buffer.from(JSON.stringify(translated.body));
  const context = encodeContext(input, translated.request);
  return {
    request: adapter.buildRequest(provider, credential, buildInput(input, translated.body, rawBody)),
    translated: true,
    headers: droppedHeader(translated.dropped),
    createTap: () =>
      new TranslatingTap(
        StreamTranslator.between(family, ingress, { ...context, includeUsage: translated.request.streamUsage === true }),
        ingress,
      ),
    completeBody: (body) => encodeAnswer(ingress, codecFor(family).decodeResponse(parseJson(body)), context),
    clientError: (failure) => rewriteClientError(ingress, failure, request.requestId),
  };
}

/** Encodes the client's answer from neutral events (shared by the JSON and the wire exchanges). */
function encodeAnswer(ingress: ApiFamily, response: ChatResponse, context: EncodeContext) {
  let encoded: Json;
  try {
    encoded = codecFor(ingress).encodeResponse(response, context);
  } catch (error) {
    throw new UnreadableUpstreamBody((error as Error).message, { cause: error });
  }
  return {
    body: JSON.stringify(encoded),
    contentType: JSON_TYPE,
    usage: response.usage.input || response.usage.output ? { input: response.usage.input, output: response.usage.output } : undefined,
  };
}

/** A provider with its own wire format: always translated, its answer always a stream. */
function wireExchange(input: ExchangeInput, wire: WireCodec): Exchange {
  const { request, adapter, provider, credential } = input;
  const ingress = request.ingress;
  const neutral = codecFor(ingress).decodeRequest(request.body, decodeContext(input));
  if (neutral.candidates !== undefined && neutral.candidates > 1)
    throw new TranslationError(
      'unsupported_translation',
      'more than one answer per request cannot be translated',
      ingress === 'gemini' ? 'generationConfig.candidateCount' : 'n',
    );
  const body = wire.encodeRequest(neutral, { requestId: request.requestId, provider, credential });
  const context = encodeContext(input, neutral);
  return {
    request: adapter.buildRequest(provider, credential, { ...buildInput(input, body, Buffer.from(JSON.stringify(body))), stream: true }),
    translated: true,
    headers: droppedHeader(neutral.dropped),
    createTap: () =>
      new TranslatingTap(
        new StreamTranslator(
          wire.streamDecoder(),
          codecFor(ingress).streamEncoder({ ...context, includeUsage: neutral.streamUsage === true }),
        ),
        ingress,
      ),
    completeBody(upstream) {
      const decoder = wire.streamDecoder();
      let response: ChatResponse;
      try {
        response = aggregateStream([...decoder.push(upstream), ...decoder.end()]);
      } catch (error) {
        throw new UnreadableUpstreamBody(`the provider's answer could not be read: ${(error as Error).message}`, { cause: error });
      }
      return encodeAnswer(ingress, response, context);
    },
    clientError: (failure) => rewriteClientError(ingress, failure, request.requestId),
  };
}

function countTokensExchange(input: ExchangeInput): Exchange {
  const { request, adapter, provider, credential } = input;
  const ingress = request.ingress;
  const tap = (): StreamTap => {
    throw new TranslationError('invalid_request', 'token counts are not streamed', 'stream');
  };
  const neutral = codecFor(ingress).decodeRequest(countTokensBody(ingress, request.body), { ...decodeContext(input), stream: false });
  const headers = droppedHeader(neutral.dropped);
  if (!adapter.countTokensRequest || !adapter.countFromResponse) {
    const estimate = estimateInputTokens(neutral);
    return {
      request: undefined,
      translated: true,
      headers,
      createTap: tap,
      completeBody: () => {
        throw new UnreadableUpstreamBody('no upstream body for a local count');
      },
      clientError: (failure) => failure,
      local: {
        status: 200,
        headers: { 'content-type': JSON_TYPE, 'x-switchyard-token-count': 'estimate', ...headers },
        body: JSON.stringify(countTokensResponse(ingress, estimate)),
      },
    };
  }
  const family = adapter.family;
  const same = family === ingress;
  const body =
    same || family === 'custom' ? request.body : codecFor(family).encodeRequest(neutral, adapter.encodeOptions?.(provider) ?? {});
  const rawBody = same ? request.rawBody : Buffer.from(JSON.stringify(body));
  const count = adapter.countFromResponse;
  return {
    request: adapter.countTokensRequest(provider, credential, buildInput(input, body, rawBody)),
    translated: !same,
    headers,
    createTap: tap,
    completeBody(upstream) {
      const answer = parseJson(upstream);
      if (same) return { body: upstream, contentType: JSON_TYPE, usage: undefined };
      const tokens = count(answer);
      if (tokens === undefined) throw new UnreadableUpstreamBody('the provider did not say how many tokens the input has');
      return { body: JSON.stringify(countTokensResponse(ingress, tokens)), contentType: JSON_TYPE, usage: undefined };
    },
    clientError: (failure) => (same ? failure : rewriteClientError(ingress, failure, request.requestId)),
  };
}
