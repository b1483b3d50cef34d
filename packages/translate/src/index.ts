/**
 * @module @switchyard/translate
 * Translators between the four LLM API families (OpenAI chat, OpenAI
 * Responses, Anthropic Messages, Gemini): requests, responses and streams,
 * through one intermediate representation. No runtime dependencies.
 */
export { aggregateStream } from './aggregate.js';
export { anthropicThinkingMode, DEFAULT_THINKING_MODES, isAnthropicThinkingMode } from './anthropic/thinkingModes.js';
export type { ApiFamily } from './apiFamily.js';
export type {
  AnthropicThinkingMode,
  DecodeContext,
  EncodeRequestOptions,
  FamilyCodec,
  HostedToolsPolicy,
  StreamDecoder,
  StreamEncodeContext,
  StreamEncoder,
} from './codec.js';
export { EFFORT_BUDGETS, effortOfBudget } from './common.js';
export {
  anthropicErrorBody,
  describeUpstreamError,
  type ErrorInfo,
  geminiErrorBody,
  googleStatusOf,
  openAiErrorBody,
  statusOfErrorType,
  type UpstreamErrorDescription,
} from './errorShapes.js';
export { TranslationError, type TranslationErrorCode } from './errors.js';
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
} from './families.js';
export { Glob, type GlobSteps } from './glob.js';
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
  ResponsesToolName,
  ResponsesToolNames,
  Role,
  StopReason,
  StreamEvent,
  TextPart,
  ThinkingPart,
  TokenUsage,
  ToolCallPart,
  ToolChoice,
  ToolDefinition,
  ToolGroup,
  ToolResultPart,
} from './ir.js';
export { flatToolName, responsesToolsOf } from './responses/request.js';
export {
  MAX_SSE_EVENT_BYTES,
  type SseEvent,
  SseParser,
  type SseParserOptions,
  sseEvent,
  sseEventTooLarge,
} from './sseParser.js';
export { type ByteStreamDecoder, SseStreamDecoder, StreamTranslator } from './streamTranslator.js';
