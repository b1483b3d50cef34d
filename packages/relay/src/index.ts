/**
 * @module @switchyard/relay
 * The pipeline that carries one client request upstream and back: model
 * routing, provider adapters, the undici transport, retries and credential
 * rotation, SSE streaming with translation between API families, the
 * response cache and node failover. Routing decisions come from
 * `@switchyard/core-routing`, format translation from `@switchyard/translate`.
 */

export type {
  AttemptEndEvent,
  DecisionEvent,
  RelayEvents,
  RelayOutcome,
  RequestEndEvent,
  RequestStartEvent,
} from '@switchyard/core-routing';
// The glob lives in translate (its thinking modes match model names too); the relay's API keeps it.
export { Glob, type GlobSteps } from '@switchyard/translate';
export { BatchQueue, type BatchQueueOptions, type BatchSettings } from './batchQueue.js';
export type { BufferLimits } from './bufferedDispatch.js';
export { countTokensBody, countTokensResponse, estimateInputTokens } from './countTokens.js';
export type { RelayErrorCode, RelayFailure } from './errors.js';
export { type Exchange, type ExchangeInput, prepareExchange, UnreadableUpstreamBody } from './exchange.js';
export {
  AFFINITY_HEADER,
  type FailoverSettings,
  FORWARDED_HEADER,
  type ForwardOutcome,
  NodeFailover,
  SERVED_BY_HEADER,
} from './failover.js';
export { type IngressFormat, ingressFormat, openAiFormat } from './ingressFormat.js';
export { type ModelListing, ModelRouter, type RouteTarget } from './modelRouter.js';
export type { WireCodec } from './providers/adapter.js';
export { AdapterRegistry, type BuildInput, type ProviderAdapter, type SendOptions, type Transport } from './providers/adapter.js';
export { anthropicAdapter } from './providers/anthropic.js';
export { EventStreamDecoder, EventStreamError, type EventStreamMessage } from './providers/awsEventStream.js';
export {
  CloudAssistantStreamDecoder,
  cloudAssistantEndpoint,
  cloudAssistantWire,
  cloudCodingAssistantAdapter,
  encodeCloudAssistantRequest,
} from './providers/cloudCodingAssistant.js';
export { codeAssistantAdapter, codeAssistantEndpoint } from './providers/codeAssistant.js';
export { geminiAdapter, geminiModelPath } from './providers/gemini.js';
export { baseUrlOf, bodyWithModel, classifyUpstreamError } from './providers/http.js';
export { createMockAdapter, MockTransport } from './providers/mock.js';
export { chatBody, classifyOpenAiError, openAiAdapter, openAiCompatibleAdapter, openAiUsage } from './providers/openai.js';
export { openAiResponsesAdapter } from './providers/responses.js';
export type { CredentialQuotaView, QuotaExceededSettings } from './quotaPolicy.js';
export {
  defaultAdapters,
  Relay,
  type RelayCooldowns,
  type RelayCredentialPool,
  type RelayHealth,
  type RelayOptions,
} from './relay.js';
export { type CachedResponse, type CacheStats, ResponseCache, type ResponseCacheSettings } from './responseCache.js';
export { parseGoDuration, retryAfterMs } from './retryAfter.js';
export { type Route, type RoutingStatus, RoutingTable } from './routingTable.js';
export { MemorySink, nodeResponseSink, type ResponseSink } from './sink.js';
export { OpenAiStreamTap, SseEventSplitter } from './sse.js';
export { keepAliveFor, passThroughTap, type StreamTap, TranslatingTap } from './streamTap.js';
export type {
  ApiFamily,
  FailureKind,
  ProviderConfig,
  RelayCredential,
  RelayRequest,
  UpstreamFailure,
  UpstreamRequest,
  UpstreamResponse,
  Usage,
} from './types.js';
export {
  type ConnectionPoolSettings,
  classifyTransportError,
  type TransportConnectOptions,
  UndiciTransport,
} from './upstream.js';
