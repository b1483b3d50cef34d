/**
 * @module cloudCodingAssistant
 * The `cloud-coding-assistant` provider kind: a cloud vendor's coding
 * assistant (the CodeWhisperer-style streaming API behind Amazon Q
 * Developer and Kiro), signed in through an AWS SSO-OIDC device flow by the
 * credentials package (builder ID or identity center). It speaks neither of
 * the four API families, so every request is translated to it and every
 * answer back.
 *
 * Request: `POST <endpoint>/generateAssistantResponse`, bearer token, JSON:
 *
 * ```json
 * {
 *   "conversationState": {
 *     "chatTriggerType": "MANUAL",
 *     "conversationId": "<uuid>",
 *     "currentMessage": { "userInputMessage": {
 *       "content": "…", "modelId": "claude-sonnet-4", "origin": "AI_EDITOR",
 *       "images": [{ "format": "png", "source": { "bytes": "<base64>" } }],
 *       "userInputMessageContext": {
 *         "tools": [{ "toolSpecification": { "name", "description", "inputSchema": { "json": {…} } } }],
 *         "toolResults": [{ "toolUseId", "content": [{ "text" }], "status": "success" | "error" }]
 *       } } },
 *     "history": [
 *       { "userInputMessage": { … } },
 *       { "assistantResponseMessage": { "content": "…", "toolUses": [{ "toolUseId", "name", "input": {…} }] } }
 *     ]
 *   },
 *   "profileArn": "arn:aws:codewhisperer:…"
 * }
 * ```
 *
 * The conversation alternates user and assistant turns and ends with the
 * user's: the last turn is `currentMessage`, the others `history`. There is
 * no system field: the system prompt opens the first user turn. Sampling
 * settings have no place either (they are reported as dropped), nor do
 * images by URL (refused).
 *
 * Answer: always a stream in AWS event-stream framing (see
 * `awsEventStream.ts`), one JSON payload per message, named by its
 * `:event-type` header: `assistantResponseEvent` (`content`: text),
 * `reasoningContentEvent` (`text`, `signature`), `toolUseEvent`
 * (`toolUseId`, `name`, `input`: a fragment of the arguments, `stop` on the
 * last one), and bookkeeping (`meteringEvent`, `contextUsageEvent`,
 * `messageMetadataEvent`). Failures are messages of type `exception` or
 * `error`. The stream has no end marker: it ends when the answer does, and
 * a message cut in half (caught by the checksums) marks a broken stream.
 * The service reports no token counts, so requests to it deduct no tokens.
 *
 * Endpoint: `base_url`, else `https://codewhisperer.<region>.amazonaws.com`,
 * the region from the credential (`metadata.region`) or `options.region`
 * (default `us-east-1`). The profile ARN comes from `metadata.profile_arn`
 * or `options.profile_arn`; builder-ID accounts have none.
 */
import { randomUUID } from 'node:crypto';
import type { ByteStreamDecoder, ChatRequest, Message, StreamEvent } from '@switchyard/translate';
import {
  compact,
  dropResultImages,
  dropSetting,
  dropSettings,
  isObject,
  type Json,
  mergeConsecutiveTurns,
  parseArguments,
  unsupported,
} from '@switchyard/translate/wire';
import type { ProviderConfig, RelayCredential, UpstreamRequest } from '../types.js';
import type { ProviderAdapter, WireCodec } from './adapter.js';
import { EventStreamDecoder } from './awsEventStream.js';
import { classifyUpstreamError } from './http.js';

const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;
const IMAGE_FORMATS = new Set(['png', 'jpeg', 'gif', 'webp']);

/** The endpoint: `base_url`, or the regional default (the region checked, so it cannot steer the host name). */
export function cloudAssistantEndpoint(provider: ProviderConfig, credential: RelayCredential | undefined): string {
  if (provider.baseUrl) return provider.baseUrl.endsWith('/') ? provider.baseUrl.slice(0, -1) : provider.baseUrl;
  const region = credential?.metadata?.region ?? (typeof provider.options?.region === 'string' ? provider.options.region : 'us-east-1');
  if (!REGION.test(region)) throw new Error(`provider ${provider.name}: ${JSON.stringify(region)} is not an AWS region`);
  return `https://codewhisperer.${region}.amazonaws.com`;
}

function userTurn(message: Message, index: number, model: string, system: string | undefined, request: ChatRequest): Json {
  const texts: string[] = [];
  const images: Json[] = [];
  const results: Json[] = [];
  message.parts.forEach((part, j) => {
    if (part.type === 'text') texts.push(part.text);
    else if (part.type === 'image') {
      if (part.source.kind !== 'base64')
        unsupported(`messages[${index}].content[${j}]`, 'this provider takes images inline (base64), not by URL');
      const format = part.source.mediaType.replace(/^image\//, '');
      if (!IMAGE_FORMATS.has(format))
        unsupported(`messages[${index}].content[${j}]`, `image type ${part.source.mediaType} is not accepted by this provider`);
      images.push({ format, source: { bytes: part.source.data } });
    } else if (part.type === 'tool_result') {
      dropResultImages(request, part, `messages[${index}]`);
      results.push({
        toolUseId: part.callId,
        content: part.content.flatMap((c) => (c.type === 'text' ? [{ text: c.text }] : [])),
        status: part.isError ? 'error' : 'success',
      });
    }
  });
  const content = [system, texts.join('\n')].filter((t) => t !== undefined && t.length > 0).join('\n\n');
  const turn: Json = { content, modelId: model, origin: 'AI_EDITOR' };
  if (images.length > 0) turn.images = images;
  if (results.length > 0) turn.userInputMessageContext = { toolResults: results };
  return { userInputMessage: turn };
}

function assistantTurn(message: Message, index: number): Json {
  const content = message.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
  const toolUses = message.parts.flatMap((p, j) =>
    p.type === 'tool_call'
      ? [{ toolUseId: p.id, name: p.name, input: parseArguments(p.arguments, `messages[${index}].tool_calls[${j}].arguments`) }]
      : [],
  );
  return { assistantResponseMessage: compact({ content, toolUses: toolUses.length > 0 ? toolUses : undefined }) };
}

/** Writes the provider's request for a neutral one. */
export function encodeCloudAssistantRequest(
  request: ChatRequest,
  context: { provider: ProviderConfig; credential: RelayCredential | undefined; conversationId?: string },
): Json {
  const messages = mergeConsecutiveTurns(request.messages);
  if (messages[0]?.role !== 'user') unsupported('messages[0]', 'this provider needs the conversation to open with a user turn');
  if (messages.at(-1)?.role !== 'user')
    unsupported('messages', 'this provider needs the conversation to end with a user turn (no assistant prefill)');
  const system = request.system.length > 0 ? request.system.join('\n\n') : undefined;
  const turns = messages.map((message, i) =>
    message.role === 'user' ? userTurn(message, i, request.model, i === 0 ? system : undefined, request) : assistantTurn(message, i),
  );
  const current = turns.at(-1)!.userInputMessage as Json;
  if (request.tools && request.tools.length > 0) {
    const tools = request.tools.map((t) => ({
      toolSpecification: compact({ name: t.name, description: t.description, inputSchema: { json: t.parameters } }),
    }));
    current.userInputMessageContext = { ...(isObject(current.userInputMessageContext) ? current.userInputMessageContext : {}), tools };
  }
  dropSettings(request, [
    ['maxTokens', 'max_tokens'],
    ['temperature', 'temperature'],
    ['topP', 'top_p'],
    ['topK', 'top_k'],
    ['stop', 'stop'],
    ['seed', 'seed'],
    ['responseFormat', 'response_format'],
    ['reasoning', 'reasoning'],
  ]);
  if (request.toolChoice && request.toolChoice.type !== 'auto') dropSetting(request, 'toolChoice', 'tool_choice');
  const state: Json = {
    chatTriggerType: 'MANUAL',
    conversationId: context.conversationId ?? randomUUID(),
    currentMessage: { userInputMessage: current },
  };
  if (turns.length > 1) state.history = turns.slice(0, -1);
  const profileArn =
    context.credential?.metadata?.profile_arn ??
    (typeof context.provider.options?.profile_arn === 'string' ? context.provider.options.profile_arn : undefined);
  return compact({ conversationState: state, profileArn });
}

/** Reads the provider's event stream into neutral events. */
export class CloudAssistantStreamDecoder implements ByteStreamDecoder {
  private readonly frames = new EventStreamDecoder();
  private started = false;
  private readonly calls = new Map<string, number>();
  private failed = false;

  push(chunk: Uint8Array): StreamEvent[] {
    const out: StreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      out.push({ type: 'start' });
    }
    for (const message of this.frames.push(chunk)) {
      let payload: Json = {};
      try {
        const parsed: unknown = JSON.parse(message.payload.toString('utf8') || '{}');
        if (isObject(parsed)) payload = parsed;
      } catch {
        // A payload that is not JSON carries nothing this decoder reads.
      }
      const kind = message.headers[':message-type'];
      if (kind === 'exception' || kind === 'error') {
        this.failed = true;
        const type = message.headers[':exception-type'] ?? message.headers[':error-code'];
        out.push({
          type: 'error',
          message: String(payload.message ?? message.headers[':error-message'] ?? 'the provider failed'),
          errorType: String(type ?? 'api_error'),
        });
        continue;
      }
      const name = message.headers[':event-type'];
      // Some deployments wrap the payload in an object named after the event.
      const event = typeof name === 'string' && isObject(payload[name]) ? (payload[name] as Json) : payload;
      switch (name) {
        case 'assistantResponseEvent':
          if (typeof event.content === 'string' && event.content.length > 0) out.push({ type: 'text', text: event.content });
          break;
        case 'reasoningContentEvent':
          if (typeof event.text === 'string' && event.text.length > 0) out.push({ type: 'thinking', text: event.text });
          if (typeof event.signature === 'string') out.push({ type: 'thinking_signature', signature: event.signature });
          break;
        case 'toolUseEvent': {
          const id = String(event.toolUseId ?? '');
          let index = this.calls.get(id);
          if (index === undefined) {
            index = this.calls.size;
            this.calls.set(id, index);
            out.push({ type: 'tool_call_start', index, id, name: String(event.name ?? '') });
          }
          const input = typeof event.input === 'string' ? event.input : isObject(event.input) ? JSON.stringify(event.input) : '';
          if (input.length > 0) out.push({ type: 'tool_call_delta', index, arguments: input });
          break;
        }
        case 'invalidStateEvent':
          this.failed = true;
          out.push({
            type: 'error',
            message: String(event.message ?? 'the provider reported an invalid state'),
            errorType: String(event.reason ?? 'invalid_state'),
          });
          break;
        default:
          break;
      }
    }
    return out;
  }

  end(): StreamEvent[] {
    // Half a message left over means the stream was cut: no finish, so the relay ends it with an error event.
    if (this.failed || this.frames.pending > 0) return [];
    return [{ type: 'finish', stopReason: this.calls.size > 0 ? 'tool_use' : 'end_turn' }, { type: 'end' }];
  }
}

/** The provider's wire format. */
export const cloudAssistantWire: WireCodec = {
  encodeRequest: (request, context) => encodeCloudAssistantRequest(request, context),
  streamDecoder: () => new CloudAssistantStreamDecoder(),
};

function headers(provider: ProviderConfig, credential: RelayCredential | undefined): Record<string, string> {
  const out: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/vnd.amazon.eventstream',
    ...provider.headers,
  };
  if (credential) out.authorization = `Bearer ${credential.token}`;
  return out;
}

/**
 * The `cloud-coding-assistant` adapter.
 *
 * @example
 * ```ts
 * const providers = [{ name: 'cloud', kind: 'cloud-coding-assistant', models: ['claude-sonnet-4'], options: { region: 'us-east-1' } }];
 * ```
 */
export const cloudCodingAssistantAdapter: ProviderAdapter = {
  kind: 'cloud-coding-assistant',
  family: 'custom',
  wire: cloudAssistantWire,
  requiresCredential: true,
  buildRequest(provider, credential, input): UpstreamRequest {
    return {
      url: `${cloudAssistantEndpoint(provider, credential)}/generateAssistantResponse`,
      method: 'POST',
      headers: headers(provider, credential),
      body: input.rawBody,
    };
  },
  healthRequest(provider, credential): UpstreamRequest {
    // The service has no cheap read; any HTTP answer from the endpoint shows it is reachable.
    return { url: `${cloudAssistantEndpoint(provider, credential)}/`, method: 'GET', headers: headers(provider, credential) };
  },
  classify: classifyUpstreamError,
  usageFromResponse: () => undefined,
  usageFromEvent: () => undefined,
};
