/**
 * @module @switchyard/core-routing
 * Pure routing decisions for an LLM gateway: selection strategies, cooldown,
 * health, self-healing and the failover ring. Framework-agnostic: time comes
 * from an injected clock, state sits behind ports, and every state change is
 * a typed event.
 */
export { type AvailabilityBinding, bindAvailability } from './bindAvailability.js';
export { type Clock, every, FakeScheduler, type Scheduler, systemClock, systemScheduler, type TimerHandle } from './clock.js';
export { CooldownManager, MAX_COOLDOWN_MS } from './cooldown/cooldownManager.js';
export type { CooldownDetection, CooldownDurations } from './cooldown/cooldownSettings.js';
export {
  COOLDOWN_REASONS,
  type CooldownDeleteOptions,
  type CooldownEndCause,
  type CooldownPeriod,
  type CooldownReason,
  type CooldownStateStore,
  type CooldownStoreChange,
  MemoryCooldownStateStore,
  parseCooldownPeriod,
  samePeriod,
} from './cooldown/cooldownStateStore.js';
export type {
  CooldownEndEvent,
  CooldownEvents,
  CooldownFailure,
  CooldownManagerOptions,
  CooldownSource,
  CooldownStatus,
} from './cooldown/cooldownTypes.js';
export {
  AllProvidersInCooldown,
  NoProviderAvailable,
  ProviderNotFound,
  RoutingError,
  type RoutingErrorCode,
  TranslationError,
  type TranslationErrorCode,
} from './errors.js';
export { HealthMonitor } from './health/healthMonitor.js';
export type {
  HealthAggregate,
  HealthCheckResult,
  HealthEvents,
  HealthMonitorOptions,
  HealthProbe,
  HealthRecord,
  HealthSettings,
  HealthStatus,
  ProviderStatusRecord,
} from './health/healthTypes.js';
export {
  type HealingAction,
  type HealingActionRecord,
  type HealingOutcome,
  type HealingStatus,
  SelfHealer,
  type SelfHealingEvents,
  type SelfHealingSettings,
} from './health/selfHealer.js';
export { BatchQueue, type BatchQueueOptions, type BatchSettings } from './relay/batchQueue.js';
export { countTokensBody, countTokensResponse, estimateInputTokens } from './relay/countTokens.js';
export type { RelayErrorCode, RelayFailure } from './relay/errors.js';
export type { AttemptEndEvent, DecisionEvent, RelayEvents, RelayOutcome, RequestEndEvent, RequestStartEvent } from './relay/events.js';
export { type Exchange, type ExchangeInput, prepareExchange, UnreadableUpstreamBody } from './relay/exchange.js';
export {
  AFFINITY_HEADER,
  type FailoverSettings,
  FORWARDED_HEADER,
  type ForwardOutcome,
  NodeFailover,
  SERVED_BY_HEADER,
} from './relay/failover.js';
export { type IngressFormat, ingressFormat, openAiFormat } from './relay/ingressFormat.js';
export { Glob, type GlobSteps, globToRegExp, type ModelListing, ModelRouter, type RouteTarget } from './relay/modelRouter.js';
export type { WireCodec } from './relay/providers/adapter.js';
export { AdapterRegistry, type BuildInput, type ProviderAdapter, type Transport } from './relay/providers/adapter.js';
export { anthropicAdapter } from './relay/providers/anthropic.js';
export { EventStreamDecoder, EventStreamError, type EventStreamMessage } from './relay/providers/awsEventStream.js';
export {
  CloudAssistantStreamDecoder,
  cloudAssistantEndpoint,
  cloudAssistantWire,
  cloudCodingAssistantAdapter,
  encodeCloudAssistantRequest,
} from './relay/providers/cloudCodingAssistant.js';
export { codeAssistantAdapter, codeAssistantEndpoint } from './relay/providers/codeAssistant.js';
export { geminiAdapter, geminiModelPath } from './relay/providers/gemini.js';
export { baseUrlOf, bodyWithModel, classifyUpstreamError } from './relay/providers/http.js';
export { createMockAdapter, MockTransport } from './relay/providers/mock.js';
export { chatBody, classifyOpenAiError, openAiAdapter, openAiCompatibleAdapter, openAiUsage } from './relay/providers/openai.js';
export { openAiResponsesAdapter } from './relay/providers/responses.js';
export type { CredentialQuotaView, QuotaExceededSettings } from './relay/quotaPolicy.js';
export {
  defaultAdapters,
  Relay,
  type RelayCooldowns,
  type RelayCredentialPool,
  type RelayHealth,
  type RelayOptions,
} from './relay/relay.js';
export { type CachedResponse, type CacheStats, ResponseCache, type ResponseCacheSettings } from './relay/responseCache.js';
export { parseGoDuration, retryAfterMs } from './relay/retryAfter.js';
export { type Route, type RoutingStatus, RoutingTable } from './relay/routingTable.js';
export { MemorySink, nodeResponseSink, type ResponseSink } from './relay/sink.js';
export { OpenAiStreamTap, SseEventSplitter } from './relay/sse.js';
export { keepAliveFor, passThroughTap, type StreamTap, TranslatingTap } from './relay/streamTap.js';
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
} from './relay/types.js';
export {
  type ConnectionPoolSettings,
  classifyTransportError,
  type TransportConnectOptions,
  UndiciTransport,
} from './relay/upstream.js';
export { ConsistentHashRing, type ConsistentHashRingOptions, ringPosition } from './ring/consistentHashRing.js';
export {
  type CandidateSpec,
  type CandidateStatus,
  type LoadBalancingStatus,
  type SelectOptions,
  Selector,
  type SelectorOptions,
  STRATEGIES,
  type StrategyName,
  type UnavailableReason,
} from './selection/selector.js';
export { withTimeout } from './timeout.js';
export { aggregateStream } from './translate/aggregate.js';
export { anthropicThinkingMode, DEFAULT_THINKING_MODES, isAnthropicThinkingMode } from './translate/anthropic/thinkingModes.js';
export type {
  AnthropicThinkingMode,
  DecodeContext,
  EncodeRequestOptions,
  FamilyCodec,
  StreamDecoder,
  StreamEncodeContext,
  StreamEncoder,
} from './translate/codec.js';
export { EFFORT_BUDGETS, effortOfBudget } from './translate/common.js';
export {
  anthropicErrorBody,
  describeUpstreamError,
  type ErrorInfo,
  geminiErrorBody,
  googleStatusOf,
  openAiErrorBody,
  statusOfErrorType,
  type UpstreamErrorDescription,
} from './translate/errorShapes.js';
export {
  API_FAMILIES,
  anthropicCodec,
  codecFor,
  geminiCodec,
  openAiChatCodec,
  responsesCodec,
  type TranslatedRequest,
  translateRequest,
  translateResponse,
} from './translate/families.js';
export type {
  ChatRequest,
  ChatResponse,
  EncodeContext,
  ImagePart,
  Message,
  Part,
  ReasoningEffort,
  ReasoningSettings,
  ResponseFormat,
  Role,
  StopReason,
  StreamEvent,
  TextPart,
  ThinkingPart,
  TokenUsage,
  ToolCallPart,
  ToolChoice,
  ToolDefinition,
  ToolResultPart,
} from './translate/ir.js';
export {
  MAX_SSE_EVENT_BYTES,
  type SseEvent,
  SseParser,
  type SseParserOptions,
  sseEvent,
  sseEventTooLarge,
} from './translate/sseParser.js';
export { type ByteStreamDecoder, SseStreamDecoder, StreamTranslator } from './translate/streamTranslator.js';
