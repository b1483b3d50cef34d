/**
 * @module anthropic/request
 * Anthropic Messages requests (`POST /v1/messages`) in and out of the
 * neutral model: the top-level `system` (string or text blocks), text,
 * image (base64 and URL sources), `tool_use`, `tool_result`, `thinking` and
 * `redacted_thinking` blocks, custom tools with `input_schema`,
 * `tool_choice` (with `disable_parallel_tool_use`), `stop_sequences`,
 * `thinking` (a `budget_tokens` budget, or `adaptive` with
 * `output_config.effort`, as Claude Code sends for Claude 4.6 and later)
 * and `metadata.user_id`. Written out, thinking takes the form the model
 * wants (see `thinkingModes`).
 */

import type { DecodeContext, EncodeRequestOptions } from '../codec.js';
import { budgetOf, dropSettings, effortOf, hostedTool, isBlank, noteSettingPath, readNumericSettings, sendableTurns } from '../common.js';
import {
  array,
  compact,
  invalid,
  isObject,
  type Json,
  noteUnknown,
  object,
  optionalInteger,
  optionalString,
  parseArguments,
  string,
  stringList,
  unsupported,
} from '../fields.js';
import type {
  ChatRequest,
  ImagePart,
  Message,
  Part,
  ReasoningEffort,
  ReasoningSettings,
  TextPart,
  ToolChoice,
  ToolDefinition,
} from '../ir.js';
import { anthropicThinkingMode } from './thinkingModes.js';

const KNOWN = new Set([
  'model',
  'messages',
  'system',
  'max_tokens',
  'stream',
  'tools',
  'tool_choice',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'thinking',
  'metadata',
  'output_config',
]);

/** `output_config.effort` levels; those above `high` are the highest level other families have. */
const EFFORTS: Readonly<Record<string, ReasoningEffort>> = { low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'high' };

function image(block: Json, path: string): ImagePart {
  const source = object(block.source, `${path}.source`);
  if (source.type === 'base64')
    return {
      type: 'image',
      source: {
        kind: 'base64',
        mediaType: string(source.media_type, `${path}.source.media_type`),
        data: string(source.data, `${path}.source.data`),
      },
    };
  if (source.type === 'url') return { type: 'image', source: { kind: 'url', url: string(source.url, `${path}.source.url`) } };
  return unsupported(`${path}.source.type`, `image source ${JSON.stringify(source.type)} (a Files API reference) cannot be translated`);
}

function resultContent(content: unknown, path: string): (TextPart | ImagePart)[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return array(content, path).map((raw, i) => {
    const block = object(raw, `${path}[${i}]`);
    if (block.type === 'text') return { type: 'text', text: string(block.text, `${path}[${i}].text`) };
    if (block.type === 'image') return { ...image(block, `${path}[${i}]`), path: `${path}[${i}]` };
    return unsupported(`${path}[${i}].type`, `tool result blocks of type ${JSON.stringify(block.type)} cannot be translated`);
  });
}

function block(raw: unknown, path: string): Part | undefined {
  const b = object(raw, path);
  switch (b.type) {
    case 'text':
      return { type: 'text', text: string(b.text, `${path}.text`) };
    case 'image':
      return image(b, path);
    case 'tool_use':
      return {
        type: 'tool_call',
        id: string(b.id, `${path}.id`),
        name: string(b.name, `${path}.name`),
        arguments: JSON.stringify(b.input === undefined ? {} : object(b.input, `${path}.input`)),
      };
    case 'tool_result': {
      const part: Part = {
        type: 'tool_result',
        callId: string(b.tool_use_id, `${path}.tool_use_id`),
        content: resultContent(b.content, `${path}.content`),
      };
      if (b.is_error === true) Object.assign(part, { isError: true, errorPath: `${path}.is_error` });
      return part;
    }
    case 'thinking':
      return compact({
        type: 'thinking' as const,
        text: string(b.thinking, `${path}.thinking`),
        signature: optionalString(b.signature, `${path}.signature`),
      });
    case 'redacted_thinking':
      return { type: 'thinking', text: '', redacted: string(b.data, `${path}.data`) };
    case 'document':
    case 'search_result':
    case 'server_tool_use':
    case 'web_search_tool_result':
    case 'container_upload':
      return unsupported(`${path}.type`, `${b.type} blocks cannot be translated to other API families`);
    default:
      return invalid(`${path}.type`, 'is not a known content block type');
  }
}

function decodeMessage(raw: unknown, path: string): Message {
  const message = object(raw, path);
  const role = message.role;
  if (role !== 'user' && role !== 'assistant') invalid(`${path}.role`, 'must be "user" or "assistant"');
  const content = message.content;
  if (typeof content === 'string') return { role, parts: [{ type: 'text', text: content }], path: `${path}.content` };
  const parts: Part[] = [];
  array(content, `${path}.content`).forEach((b, i) => {
    const part = block(b, `${path}.content[${i}]`);
    if (part) parts.push(part);
  });
  return { role, parts, path: `${path}.content` };
}

function decodeSystem(system: unknown): string[] {
  if (system === undefined || system === null) return [];
  if (typeof system === 'string') return [system];
  return array(system, 'system').map((raw, i) => {
    const b = object(raw, `system[${i}]`);
    if (b.type !== 'text') invalid(`system[${i}].type`, 'must be "text"');
    return string(b.text, `system[${i}].text`);
  });
}

function decodeToolChoice(raw: unknown, request: ChatRequest): void {
  if (raw === undefined || raw === null) return;
  const choice = object(raw, 'tool_choice');
  const kinds: Record<string, ToolChoice['type']> = { auto: 'auto', any: 'required', none: 'none', tool: 'tool' };
  const kind = typeof choice.type === 'string' ? kinds[choice.type] : undefined;
  if (!kind) invalid('tool_choice.type', 'must be auto, any, tool or none');
  request.toolChoice = kind === 'tool' ? { type: 'tool', name: string(choice.name, 'tool_choice.name') } : { type: kind };
  if (choice.disable_parallel_tool_use === true) {
    request.parallelToolCalls = false;
    noteSettingPath(request, 'parallelToolCalls', 'tool_choice.disable_parallel_tool_use');
  }
}

/** `thinking` and `output_config.effort` (which also works without thinking: it sets how much Claude spends overall). */
function decodeReasoning(body: Json, request: ChatRequest): void {
  const reasoning: ReasoningSettings = {};
  if (body.output_config !== undefined && body.output_config !== null) {
    const config = object(body.output_config, 'output_config');
    const effort = optionalString(config.effort, 'output_config.effort');
    if (effort !== undefined) {
      if (!EFFORTS[effort]) invalid('output_config.effort', 'must be low, medium, high, xhigh or max');
      reasoning.effort = EFFORTS[effort];
    }
    noteUnknown(config, new Set(['effort']), request.dropped, 'output_config.');
  }
  if (body.thinking !== undefined && body.thinking !== null) {
    const thinking = object(body.thinking, 'thinking');
    if (thinking.type === 'enabled') {
      reasoning.budgetTokens = optionalInteger(thinking.budget_tokens, 'thinking.budget_tokens') ?? 1024;
      reasoning.includeThoughts = true;
    } else if (thinking.type === 'adaptive') reasoning.includeThoughts = true;
    else if (thinking.type !== 'disabled') invalid('thinking.type', 'must be "enabled", "adaptive" or "disabled"');
  }
  if (Object.keys(reasoning).length === 0) return;
  request.reasoning = reasoning;
  noteSettingPath(request, 'reasoning', body.thinking !== undefined && body.thinking !== null ? 'thinking' : 'output_config.effort');
}

/** Reads an Anthropic Messages request body. */
export function decodeMessagesRequest(body: Json, context: DecodeContext): ChatRequest {
  const request: ChatRequest = {
    model: context.model,
    stream: context.stream,
    system: decodeSystem(body.system),
    messages: [],
    dropped: [],
  };
  request.messages = array(body.messages, 'messages').map((m, i) => decodeMessage(m, `messages[${i}]`));
  const hosted = new Set<string>();
  if (body.tools !== undefined) {
    const tools: ToolDefinition[] = [];
    const entries = array(body.tools, 'tools');
    entries.forEach((raw, i) => {
      const tool = object(raw, `tools[${i}]`);
      // Anthropic's own tools (web search, code execution, computer use, …) have a type and no schema another upstream could use.
      if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
        hostedTool(request, context, `tools[${i}]`, `server tool ${JSON.stringify(tool.type)} has no equivalent in other families`);
        if (typeof tool.name === 'string') hosted.add(tool.name);
      } else
        tools.push(
          compact({
            name: string(tool.name, `tools[${i}].name`),
            description: optionalString(tool.description, `tools[${i}].description`),
            parameters: object(tool.input_schema, `tools[${i}].input_schema`),
          }),
        );
    });
    // Server tools left out may leave none: an empty list is not sent.
    if (tools.length > 0 || entries.length === 0) request.tools = tools;
  }
  decodeToolChoice(body.tool_choice, request);
  // Forcing a tool that was left out would ask for an answer the upstream cannot give.
  if (request.toolChoice?.type === 'tool' && hosted.has(request.toolChoice.name))
    unsupported('tool_choice.name', `forces the server tool ${JSON.stringify(request.toolChoice.name)}, which other families cannot run`);
  readNumericSettings(request, [
    ['maxTokens', body.max_tokens, 'max_tokens'],
    ['temperature', body.temperature, 'temperature'],
    ['topP', body.top_p, 'top_p'],
    ['topK', body.top_k, 'top_k'],
  ]);
  const stop = stringList(body.stop_sequences, 'stop_sequences');
  if (stop) {
    request.stop = stop;
    noteSettingPath(request, 'stop', 'stop_sequences');
  }
  decodeReasoning(body, request);
  if (isObject(body.metadata) && typeof body.metadata.user_id === 'string') {
    request.user = body.metadata.user_id;
    noteSettingPath(request, 'user', 'metadata.user_id');
  }
  noteUnknown(body, KNOWN, request.dropped);
  return request;
}

function encodeImage(part: ImagePart): Json {
  return {
    type: 'image',
    source:
      part.source.kind === 'base64'
        ? { type: 'base64', media_type: part.source.mediaType, data: part.source.data }
        : { type: 'url', url: part.source.url },
  };
}

function encodePart(part: Part, path: string): Json {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return encodeImage(part);
    case 'tool_call':
      return { type: 'tool_use', id: part.id, name: part.name, input: parseArguments(part.arguments, `${path}.arguments`) };
    case 'tool_result': {
      // A result with nothing in it is sent without content: Anthropic refuses an empty text block.
      const content = part.content.flatMap((c) =>
        c.type === 'image' ? [encodeImage(c)] : isBlank(c.text) ? [] : [{ type: 'text', text: c.text }],
      );
      return compact({
        type: 'tool_result',
        tool_use_id: part.callId,
        content: content.length > 0 ? content : undefined,
        is_error: part.isError ? true : undefined,
      });
    }
    case 'thinking':
      return part.redacted !== undefined
        ? { type: 'redacted_thinking', data: part.redacted }
        : { type: 'thinking', thinking: part.text, signature: part.signature };
  }
}

/** Anthropic verifies thinking by its signature: reasoning from another provider cannot be replayed. */
const sendsToAnthropic = (part: Part): boolean => part.type !== 'thinking' || part.redacted !== undefined || Boolean(part.signature);

/** Writes an Anthropic Messages request body. */
export function encodeMessagesRequest(request: ChatRequest, options: EncodeRequestOptions = {}): Json {
  if (request.candidates !== undefined && request.candidates > 1) unsupported('n', 'Anthropic returns one answer per request');
  if (request.responseFormat && request.responseFormat.type !== 'text')
    unsupported('response_format', 'Anthropic has no JSON mode; describe the format in the prompt or use a tool');
  const messages = sendableTurns(request, sendsToAnthropic).map((message, i) => ({
    role: message.role,
    content: message.parts.map((p, j) => encodePart(p, `messages[${i}].content[${j}]`)),
  }));
  const budget = budgetOf(request.reasoning);
  // Thinking is on for a positive budget or level, or when only its text was asked for (no budget given).
  const wantsThinking = budget !== undefined ? budget > 0 : request.reasoning?.includeThoughts === true;
  const adaptive = wantsThinking && anthropicThinkingMode(request.model, options.thinkingModes) === 'adaptive';
  const thinking = wantsThinking && !adaptive && budget !== undefined ? Math.max(1024, budget) : undefined;
  let maxTokens = request.maxTokens ?? options.defaultMaxTokens ?? 4096;
  // Anthropic requires max_tokens above a thinking budget (an adaptive model spends within max_tokens).
  if (thinking !== undefined && maxTokens <= thinking) maxTokens = thinking + (request.maxTokens ?? options.defaultMaxTokens ?? 4096);
  const body: Json = { model: request.model, max_tokens: maxTokens, messages };
  const system = request.system.filter((text) => !isBlank(text));
  if (system.length === 1) body.system = system[0];
  else if (system.length > 1) body.system = system.map((text) => ({ type: 'text', text }));
  if (request.stream) body.stream = true;
  if (request.tools)
    body.tools = request.tools.map((t) => compact({ name: t.name, description: t.description, input_schema: t.parameters }));
  if (request.toolChoice || request.parallelToolCalls === false) {
    const choice = request.toolChoice ?? { type: 'auto' };
    const type = { auto: 'auto', none: 'none', required: 'any', tool: 'tool' }[choice.type];
    const encoded: Json = { type };
    if (choice.type === 'tool') encoded.name = choice.name;
    if (request.parallelToolCalls === false && choice.type !== 'none') encoded.disable_parallel_tool_use = true;
    body.tool_choice = encoded;
  }
  compact(
    Object.assign(body, { temperature: request.temperature, top_p: request.topP, top_k: request.topK, stop_sequences: request.stop }),
  );
  if (thinking !== undefined) body.thinking = { type: 'enabled', budget_tokens: thinking };
  if (adaptive) {
    body.thinking = { type: 'adaptive' };
    // Anthropic's levels are low, medium, high (its default), xhigh and max; it has no `minimal`.
    const effort = effortOf(request.reasoning);
    if (effort) body.output_config = { effort: effort === 'minimal' ? 'low' : effort };
  }
  if (request.user !== undefined) body.metadata = { user_id: request.user };
  dropSettings(request, [
    ['seed', 'seed'],
    ['presencePenalty', 'presence_penalty'],
    ['frequencyPenalty', 'frequency_penalty'],
  ]);
  return body;
}
