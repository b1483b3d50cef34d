/**
 * @module ir
 * The neutral conversation model every family translates through. Each
 * family has a decoder into it and an encoder out of it, so four families
 * need eight translators per direction instead of twelve pairwise ones, and
 * a field two families share survives the trip even when neither is OpenAI
 * (routing every pair through OpenAI's shape, as some gateways do, loses
 * Anthropic's thinking signatures on the way to Gemini).
 *
 * The model is a superset: a field any family can express has a place here.
 * What a target family cannot express is either refused (it would change the
 * answer's meaning: `n > 1` to Anthropic) or dropped and reported (a sampling
 * hint such as `seed`), see {@link ChatRequest.dropped}.
 */

/** Who said a message. System prompts live in {@link ChatRequest.system}; tool results are user parts. */
export type Role = 'user' | 'assistant';

/** Plain text. */
export interface TextPart {
  type: 'text';
  text: string;
}

/** An image, inline (base64) or by URL. */
export interface ImagePart {
  type: 'image';
  source: { kind: 'base64'; mediaType: string; data: string } | { kind: 'url'; url: string; mediaType?: string };
  /** OpenAI's `detail` (`low`, `high`, `auto`). */
  detail?: string;
  /**
   * Where the image sits in the client's body (`messages[3].content[1]`),
   * set for images inside a tool result: a target that cannot hold them
   * drops them and names this path. Absent for images the gateway made up.
   */
  path?: string;
}

/** A call the model made to a tool. `arguments` is the JSON text, as streamed. */
export interface ToolCallPart {
  type: 'tool_call';
  id: string;
  name: string;
  arguments: string;
  /** Gemini's thought signature on a function call, returned verbatim to Gemini. */
  signature?: string;
}

/** The result of a tool call, sent back by the client. */
export interface ToolResultPart {
  type: 'tool_result';
  callId: string;
  /** The tool's name; Gemini needs it, others find it from the call. */
  name?: string;
  content: (TextPart | ImagePart)[];
  isError?: boolean;
  /**
   * Where the client marked the result as failed (Anthropic's
   * `messages[2].content[0].is_error`, Gemini's `…functionResponse.response.error`),
   * so a target that cannot say so names the client's own field.
   */
  errorPath?: string;
}

/** The model's reasoning, when the provider exposes it. */
export interface ThinkingPart {
  type: 'thinking';
  text: string;
  /** An opaque signature the issuing provider needs back (Anthropic, Gemini). */
  signature?: string;
  /** Anthropic's `redacted_thinking` data. */
  redacted?: string;
}

/** Any part of a message. */
export type Part = TextPart | ImagePart | ToolCallPart | ToolResultPart | ThinkingPart;

/** One turn of the conversation. */
export interface Message {
  role: Role;
  parts: Part[];
  /**
   * Where the turn's content sits in the client's body (`messages[2].content`,
   * `contents[1].parts`), so that a refusal of the turn names the client's own
   * field. Absent for turns the gateway made up.
   */
  path?: string;
}

/** A function the model may call. `parameters` is a JSON Schema object. */
export interface ToolDefinition {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
  strict?: boolean;
  /**
   * Set when the function came from inside an OpenAI Responses `namespace`
   * tool: {@link name} is then the flat name other families see
   * (`multi_agent_v1__close_agent`), and this says where it belongs, so its
   * calls go back to a Responses client as `{namespace, name}`.
   */
  group?: ToolGroup;
  /**
   * Set when the function stands for an OpenAI Responses `custom` tool
   * (free-form text input, as Codex's `apply_patch`): its one parameter is
   * the text, `{"input": "…"}`, and its calls go back to a Responses client
   * as `custom_tool_call` items. Holds what the function form cannot: the
   * tool's own description and its input `format` (a grammar).
   */
  custom?: { description?: string; format?: Record<string, unknown> };
}

/** Where a flattened function sits in a Responses `namespace` tool. */
export interface ToolGroup {
  /** The namespace's name (`multi_agent_v1`). */
  namespace: string;
  /** The function's name inside it (`close_agent`). */
  name: string;
  /** The namespace's description. */
  description?: string;
}

/**
 * How a Responses client knows a function the other families see under a
 * flat name: its name, its namespace (a flattened namespace function), and
 * whether it is a free-form `custom` tool.
 */
export interface ResponsesToolName {
  name: string;
  namespace?: string;
  custom?: boolean;
}

/** The Responses client's tools that other families see differently, by the name those families see. */
export type ResponsesToolNames = ReadonlyMap<string, ResponsesToolName>;

/** How the model may use tools. */
export type ToolChoice = { type: 'auto' } | { type: 'none' } | { type: 'required' } | { type: 'tool'; name: string };

/** The shape of the answer's text. */
export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json' }
  | { type: 'json_schema'; name?: string; schema: Record<string, unknown>; strict?: boolean; description?: string };

/** Reasoning settings: an effort level (OpenAI) and/or a token budget (Anthropic, Gemini). */
export interface ReasoningSettings {
  effort?: ReasoningEffort;
  budgetTokens?: number;
  /** Whether reasoning text comes back (Gemini's `includeThoughts`, Responses' `summary`). */
  includeThoughts?: boolean;
}

/** OpenAI's reasoning effort levels. */
export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high';

/** The settings of a request a target family may have no place for (and so drops, naming the client's field). */
export type SettingKey =
  | 'maxTokens'
  | 'temperature'
  | 'topP'
  | 'topK'
  | 'stop'
  | 'seed'
  | 'presencePenalty'
  | 'frequencyPenalty'
  | 'candidates'
  | 'user'
  | 'parallelToolCalls'
  | 'toolChoice'
  | 'responseFormat'
  | 'reasoning';

/** A chat request in no family's shape. */
export interface ChatRequest {
  model: string;
  stream: boolean;
  /** System prompt blocks, in order. */
  system: string[];
  messages: Message[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseFormat?: ResponseFormat;
  reasoning?: ReasoningSettings;
  /** An end-user id (OpenAI `user`, Anthropic `metadata.user_id`). */
  user?: string;
  /** Number of choices (OpenAI `n`, Gemini `candidateCount`). */
  candidates?: number;
  /** Whether the client asked for usage in the stream (OpenAI `stream_options.include_usage`). */
  streamUsage?: boolean;
  /**
   * Fields of the source body that could not be carried, as JSON paths. The
   * relay reports them in `x-switchyard-dropped-fields`.
   */
  dropped: string[];
  /**
   * Where each setting the client sent sits in its body
   * (`generationConfig.topK`, `stop_sequences`, `metadata.user_id`), noted
   * as the decoder reads it, so that a target without the setting names the
   * client's own field. Absent when no setting was sent.
   */
  settingPaths?: Partial<Record<SettingKey, string>>;
}

/** Why the model stopped. */
export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'content_filter' | 'refusal' | 'pause_turn' | 'error';

/** Token counts. `input` includes cached input; `output` includes reasoning. */
export interface TokenUsage {
  input: number;
  output: number;
  /** Input tokens read from a prompt cache. */
  cacheRead?: number;
  /** Input tokens written to a prompt cache (Anthropic). */
  cacheWrite?: number;
  /** Output tokens spent on reasoning. */
  reasoning?: number;
}

/** A complete (non-streamed) answer. */
export interface ChatResponse {
  id: string;
  model: string;
  /** Epoch seconds. */
  created?: number;
  /** Text, thinking and tool calls, in order. */
  parts: (TextPart | ToolCallPart | ThinkingPart)[];
  stopReason: StopReason;
  stopSequence?: string;
  usage: TokenUsage;
}

/**
 * One step of a streamed answer. Decoders turn upstream events into these;
 * encoders turn them into the client's events. Block boundaries are implied:
 * a text event after a tool call starts a new text block.
 */
export type StreamEvent =
  | { type: 'start'; id?: string; model?: string; usage?: Partial<TokenUsage> }
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string }
  | { type: 'thinking_signature'; signature: string }
  | { type: 'tool_call_start'; index: number; id: string; name: string; signature?: string }
  | { type: 'tool_call_delta'; index: number; arguments: string }
  | { type: 'usage'; usage: Partial<TokenUsage> }
  | { type: 'finish'; stopReason: StopReason; stopSequence?: string }
  | { type: 'error'; message: string; errorType?: string; status?: number }
  /** The upstream's own end marker (`[DONE]`, `message_stop`, `response.completed`). */
  | { type: 'end' };

/** The information an encoder needs beyond the IR itself. */
export interface EncodeContext {
  /** The model name the client sees. */
  model: string;
  /** The gateway's request id, used to derive ids where a family needs one. */
  requestId: string;
  /** Epoch milliseconds (injected, so tests are deterministic). */
  now: number;
  /**
   * The Responses request's flattened namespace functions and free-form
   * tools (flat name → namespace, name, custom), so a Responses client gets
   * its calls back as it knows them. Absent when the request had none.
   */
  responsesTools?: ResponsesToolNames;
}

/** Merges a usage update into what is known so far (later values win, absent ones keep). */
export function mergeUsage(into: TokenUsage | undefined, update: Partial<TokenUsage>): TokenUsage {
  // Field by field, not Object.entries: this runs once per streamed chunk for some providers.
  const out: TokenUsage = { input: update.input ?? into?.input ?? 0, output: update.output ?? into?.output ?? 0 };
  const cacheRead = update.cacheRead ?? into?.cacheRead;
  if (cacheRead !== undefined) out.cacheRead = cacheRead;
  const cacheWrite = update.cacheWrite ?? into?.cacheWrite;
  if (cacheWrite !== undefined) out.cacheWrite = cacheWrite;
  const reasoning = update.reasoning ?? into?.reasoning;
  if (reasoning !== undefined) out.reasoning = reasoning;
  return out;
}
