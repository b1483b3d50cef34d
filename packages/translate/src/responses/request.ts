/**
 * @module responses/request
 * OpenAI Responses requests (`POST /v1/responses`) in and out of the
 * neutral model: `instructions` and system/developer input messages,
 * `input` as text or items (`message`, `function_call`,
 * `function_call_output`, `reasoning`), `input_text`/`input_image` parts
 * (in messages and in a `function_call_output`'s list `output`, so a tool
 * result's images cross both ways), function tools (whose `strict` defaults to true here, unlike chat
 * completions), `namespace` tools (flattened), `custom` tools (as functions of one string),
 * `text.format` and `reasoning`.
 *
 * The gateway is stateless: `previous_response_id`, `conversation` and item
 * references only mean something to OpenAI itself, so they pass through to
 * a Responses provider and are refused for any other.
 */

import type { DecodeContext } from '../codec.js';
import {
  dropResultError,
  dropSettings,
  effortOf,
  hostedTool,
  noteSettingPath,
  readNumericSettings,
  resultContentAt,
  toolNamesById,
} from '../common.js';
import {
  array,
  compact,
  invalid,
  isObject,
  type Json,
  noteUnknown,
  object,
  optionalBoolean,
  optionalString,
  string,
  unsupported,
} from '../fields.js';
import type {
  ChatRequest,
  ImagePart,
  Message,
  Part,
  ReasoningEffort,
  ResponsesToolNames,
  TextPart,
  ToolChoice,
  ToolDefinition,
  ToolGroup,
} from '../ir.js';
import { imageFromUrl } from '../openaiChat/request.js';

const KNOWN = new Set([
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'max_output_tokens',
  'temperature',
  'top_p',
  'text',
  'reasoning',
  'stream',
  'user',
  'store',
]);
const STATEFUL = ['previous_response_id', 'conversation', 'prompt'] as const;
const EFFORTS = new Set(['minimal', 'low', 'medium', 'high']);

function contentParts(content: unknown, path: string): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return array(content, path).map((raw, i): Part => {
    const partPath = `${path}[${i}]`;
    const part = object(raw, partPath);
    switch (part.type) {
      case 'input_text':
      case 'output_text':
        return { type: 'text', text: string(part.text, `${partPath}.text`) };
      case 'refusal':
        return { type: 'text', text: string(part.refusal, `${partPath}.refusal`) };
      case 'input_image':
        if (typeof part.image_url !== 'string') unsupported(`${partPath}.file_id`, 'images by file id cannot be translated');
        return imageFromUrl(part.image_url, part.detail, `${partPath}.image_url`);
      case 'input_file':
      case 'input_audio':
        return unsupported(`${partPath}.type`, `"${part.type}" parts cannot be translated to other API families`);
      default:
        return invalid(`${partPath}.type`, 'must be input_text, input_image or output_text');
    }
  });
}

function outputText(output: unknown, path: string): (TextPart | ImagePart)[] {
  if (typeof output === 'string') return [{ type: 'text', text: output }];
  return resultContentAt(contentParts(output, path), path);
}

function assistantTurn(request: ChatRequest, path: string): Message {
  const last = request.messages.at(-1);
  if (last?.role === 'assistant') return last;
  const message: Message = { role: 'assistant', parts: [], path };
  request.messages.push(message);
  return message;
}

function decodeItem(raw: unknown, path: string, request: ChatRequest): void {
  const item = object(raw, path);
  const type = item.type ?? 'message';
  switch (type) {
    case 'message': {
      const role = string(item.role, `${path}.role`);
      if (role === 'system' || role === 'developer') {
        // Each text part stays a block of its own (instructions hold no images: any is named as dropped).
        contentParts(item.content, `${path}.content`).forEach((p, j) => {
          if (p.type === 'text') request.system.push(p.text);
          else request.dropped.push(`${path}.content[${j}]`);
        });
      } else if (role === 'user')
        request.messages.push({ role: 'user', parts: contentParts(item.content, `${path}.content`), path: `${path}.content` });
      else if (role === 'assistant') assistantTurn(request, `${path}.content`).parts.push(...contentParts(item.content, `${path}.content`));
      else invalid(`${path}.role`, 'must be user, assistant, system or developer');
      return;
    }
    case 'function_call': {
      const name = string(item.name, `${path}.name`);
      const namespace = optionalString(item.namespace, `${path}.namespace`);
      assistantTurn(request, path).parts.push({
        type: 'tool_call',
        id: string(item.call_id, `${path}.call_id`),
        name: namespace === undefined ? name : flatToolName(namespace, name),
        arguments: string(item.arguments ?? '', `${path}.arguments`),
      });
      return;
    }
    case 'custom_tool_call': {
      const name = string(item.name, `${path}.name`);
      const namespace = optionalString(item.namespace, `${path}.namespace`);
      assistantTurn(request, path).parts.push({
        type: 'tool_call',
        id: string(item.call_id, `${path}.call_id`),
        name: namespace === undefined ? name : flatToolName(namespace, name),
        arguments: JSON.stringify({ input: string(item.input ?? '', `${path}.input`) }),
      });
      return;
    }
    case 'custom_tool_call_output':
    case 'function_call_output':
      request.messages.push({
        role: 'user',
        parts: [
          { type: 'tool_result', callId: string(item.call_id, `${path}.call_id`), content: outputText(item.output, `${path}.output`) },
        ],
        path: `${path}.output`,
      });
      return;
    case 'reasoning': {
      const summary = Array.isArray(item.summary) ? item.summary : [];
      const text = summary.map((s) => (isObject(s) && typeof s.text === 'string' ? s.text : '')).join('\n\n');
      // Encrypted reasoning only OpenAI can read; the summary survives as unsigned thinking.
      if (text) assistantTurn(request, path).parts.push({ type: 'thinking', text });
      return;
    }
    default:
      unsupported(`${path}.type`, `input items of type ${JSON.stringify(type)} only mean something to OpenAI itself`);
  }
}

/**
 * Responses built-in tools that OpenAI runs on its side (search, files,
 * code, computer use, image generation, remote MCP, tool search): no other
 * family's upstream can run them, so they follow `hostedTools`.
 */
const HOSTED_TOOL = /^(web_search|file_search|code_interpreter|computer|image_generation|mcp$|tool_search)/;

/**
 * The flat name of a function inside a `namespace` tool, for families
 * without namespaces: `multi_agent_v1` and `close_agent` are
 * `multi_agent_v1__close_agent` (the `__` join Codex itself uses when it
 * must flatten, with stray underscores around the join trimmed).
 *
 * @example
 * ```ts
 * flatToolName('multi_agent_v1', 'close_agent'); // 'multi_agent_v1__close_agent'
 * ```
 */
export function flatToolName(namespace: string, name: string): string {
  return `${namespace.replace(/_+$/, '')}__${name.replace(/^_+/, '')}`;
}

/**
 * The request's namespaced functions and free-form tools by the name other
 * families see (for the way back), or undefined when it has none: pass it
 * as `EncodeContext.responsesTools` when writing the answer to a Responses
 * client.
 *
 * @example
 * ```ts
 * const { request } = translateRequest('openai-responses', 'anthropic-messages', body, { model: 'claude-sonnet-4-5', stream: false });
 * const responsesTools = responsesToolsOf(request);
 * const context = { model: 'gpt-5-codex', requestId: 'r1', now: Date.now(), ...(responsesTools ? { responsesTools } : {}) };
 * const answer = translateResponse('anthropic-messages', 'openai-responses', message, context);
 * ```
 */
export function responsesToolsOf(request: ChatRequest): ResponsesToolNames | undefined {
  const special = request.tools?.filter((tool) => tool.group !== undefined || tool.custom !== undefined);
  if (!special || special.length === 0) return undefined;
  return new Map(
    special.map((tool) => [
      tool.name,
      compact({ name: tool.group?.name ?? tool.name, namespace: tool.group?.namespace, custom: tool.custom ? true : undefined }),
    ]),
  );
}

/** The text a free-form tool was called with: the function form's `input`, or the arguments as they came. */
export function customInput(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (isObject(parsed) && typeof parsed.input === 'string') return parsed.input;
  } catch {
    // Not JSON: the model wrote the text itself.
  }
  return args;
}

/**
 * A call as a Responses client knows it: a `function_call` item (with its
 * namespace, for a flattened namespace function), or a `custom_tool_call`
 * item for a free-form tool.
 */
export function responsesCallItem(name: string, callId: string, args: string, tools: ResponsesToolNames | undefined): Json {
  const known = tools?.get(name);
  const names = known ? compact({ name: known.name, namespace: known.namespace }) : { name };
  if (known?.custom) return { type: 'custom_tool_call', call_id: callId, ...names, input: customInput(args) };
  return { type: 'function_call', call_id: callId, ...names, arguments: args };
}

/** The one parameter of the function that stands for a free-form tool (a fresh object each time: encoders own what they get). */
const customParameters = () => ({
  type: 'object',
  properties: { input: { type: 'string', description: 'The input of the tool, as free-form text.' } },
  required: ['input'],
  additionalProperties: false,
});

/**
 * A `custom` (free-form) tool as a function taking `{"input": text}`. Only
 * OpenAI holds the model to a grammar `format`: elsewhere the model is told
 * the grammar in the description, and the format is named as dropped.
 */
function customTool(tool: Json, path: string, request: ChatRequest, group?: ToolGroup): ToolDefinition {
  const description = optionalString(tool.description, `${path}.description`);
  const format = tool.format === undefined || tool.format === null ? undefined : object(tool.format, `${path}.format`);
  let told = description;
  if (format !== undefined && format.type !== 'text') {
    request.dropped.push(`${path}.format`);
    const syntax = typeof format.syntax === 'string' ? `${format.syntax} ` : '';
    const definition = typeof format.definition === 'string' ? format.definition : JSON.stringify(format);
    told = `${description ?? ''}\n\nThe input must follow this ${syntax}grammar:\n${definition}`.trim();
  }
  return compact({
    name: group ? flatToolName(group.namespace, group.name) : string(tool.name, `${path}.name`),
    description: told,
    parameters: customParameters(),
    group,
    custom: compact({ description, format }),
  });
}

function functionTool(tool: Json, path: string, group?: ToolGroup): ToolDefinition {
  return compact({
    name: group ? flatToolName(group.namespace, group.name) : string(tool.name, `${path}.name`),
    description: optionalString(tool.description, `${path}.description`),
    parameters:
      tool.parameters === undefined || tool.parameters === null
        ? { type: 'object', properties: {} }
        : object(tool.parameters, `${path}.parameters`),
    // Responses tools are strict unless they say otherwise.
    strict: optionalBoolean(tool.strict, `${path}.strict`) ?? true,
    group,
  });
}

/**
 * Function tools as they are; each `namespace` tool's functions flattened to
 * one function each (see {@link flatToolName}), refused if two tools would
 * then share a name, so every call maps back to exactly one tool; hosted
 * tools dropped or refused as `context.hostedTools` says.
 */
function decodeTools(raw: unknown, request: ChatRequest, context: DecodeContext): ToolDefinition[] {
  const tools: ToolDefinition[] = [];
  const seen = new Map<string, string>();
  const add = (tool: ToolDefinition, path: string) => {
    const first = seen.get(tool.name);
    if (first !== undefined)
      unsupported(path, `the tool name ${JSON.stringify(tool.name)} (namespaces flattened) is already taken by ${first}`);
    seen.set(tool.name, path);
    tools.push(tool);
  };
  array(raw, 'tools').forEach((entry, i) => {
    const path = `tools[${i}]`;
    const tool = object(entry, path);
    if (tool.type === 'function') add(functionTool(tool, path), `${path}.name`);
    else if (tool.type === 'custom') add(customTool(tool, path, request), `${path}.name`);
    else if (tool.type === 'namespace') {
      const namespace = string(tool.name, `${path}.name`);
      const description = optionalString(tool.description, `${path}.description`);
      array(tool.tools, `${path}.tools`).forEach((member, j) => {
        const memberPath = `${path}.tools[${j}]`;
        const fn = object(member, memberPath);
        if (fn.type !== 'function' && fn.type !== 'custom')
          unsupported(
            `${memberPath}.type`,
            `only function and custom tools inside a namespace can be translated (got ${JSON.stringify(fn.type)})`,
          );
        const group = compact({ namespace, name: string(fn.name, `${memberPath}.name`), description });
        add(fn.type === 'custom' ? customTool(fn, memberPath, request, group) : functionTool(fn, memberPath, group), `${memberPath}.name`);
      });
    } else {
      const message = `built-in tool ${JSON.stringify(tool.type)} exists only at OpenAI`;
      if (typeof tool.type === 'string' && HOSTED_TOOL.test(tool.type)) hostedTool(request, context, path, message);
      else unsupported(`${path}.type`, message);
    }
  });
  return tools;
}

function decodeToolChoice(raw: unknown): ToolChoice | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (raw === 'auto' || raw === 'none' || raw === 'required') return { type: raw };
  const choice = object(raw, 'tool_choice');
  if (choice.type === 'function' || choice.type === 'custom') {
    const name = string(choice.name, 'tool_choice.name');
    const namespace = optionalString(choice.namespace, 'tool_choice.namespace');
    return { type: 'tool', name: namespace === undefined ? name : flatToolName(namespace, name) };
  }
  return unsupported('tool_choice.type', `${JSON.stringify(choice.type)} has no equivalent in other families`);
}

function decodeTextFormat(raw: unknown, request: ChatRequest): void {
  if (raw === undefined || raw === null) return;
  const text = object(raw, 'text');
  if (text.format === undefined) return;
  const format = object(text.format, 'text.format');
  if (format.type === 'text') request.responseFormat = { type: 'text' };
  else if (format.type === 'json_object') request.responseFormat = { type: 'json' };
  else if (format.type === 'json_schema')
    request.responseFormat = compact({
      type: 'json_schema' as const,
      name: optionalString(format.name, 'text.format.name'),
      description: optionalString(format.description, 'text.format.description'),
      schema: object(format.schema, 'text.format.schema'),
      strict: optionalBoolean(format.strict, 'text.format.strict'),
    });
  else invalid('text.format.type', 'must be text, json_object or json_schema');
}

/** Reads an OpenAI Responses request body. */
export function decodeResponsesRequest(body: Json, context: DecodeContext): ChatRequest {
  for (const field of STATEFUL)
    if (body[field] !== undefined && body[field] !== null)
      unsupported(field, 'refers to state kept by OpenAI; it works only when the provider is an OpenAI Responses provider');
  const request: ChatRequest = { model: context.model, stream: context.stream, system: [], messages: [], dropped: [] };
  const instructions = optionalString(body.instructions, 'instructions');
  if (instructions !== undefined) request.system.push(instructions);
  if (typeof body.input === 'string') request.messages.push({ role: 'user', parts: [{ type: 'text', text: body.input }], path: 'input' });
  else
    array(body.input, 'input').forEach((item, i) => {
      decodeItem(item, `input[${i}]`, request);
    });
  if (body.tools !== undefined) {
    const tools = decodeTools(body.tools, request, context);
    // Hosted tools left out may leave none: an empty list some upstreams refuse is not sent.
    if (tools.length > 0 || array(body.tools, 'tools').length === 0) request.tools = tools;
  }
  const choice = decodeToolChoice(body.tool_choice);
  if (choice) request.toolChoice = choice;
  const parallel = optionalBoolean(body.parallel_tool_calls, 'parallel_tool_calls');
  if (parallel !== undefined) request.parallelToolCalls = parallel;
  readNumericSettings(request, [
    ['maxTokens', body.max_output_tokens, 'max_output_tokens'],
    ['temperature', body.temperature, 'temperature'],
    ['topP', body.top_p, 'top_p'],
  ]);
  const user = optionalString(body.user, 'user');
  if (user !== undefined) request.user = user;
  decodeTextFormat(body.text, request);
  if (request.responseFormat) noteSettingPath(request, 'responseFormat', 'text.format');
  if (body.reasoning !== undefined && body.reasoning !== null) {
    const reasoning = object(body.reasoning, 'reasoning');
    const effort = optionalString(reasoning.effort, 'reasoning.effort');
    if (effort !== undefined && !EFFORTS.has(effort)) invalid('reasoning.effort', 'must be minimal, low, medium or high');
    request.reasoning = compact({
      effort: effort as ReasoningEffort | undefined,
      includeThoughts: reasoning.summary !== undefined && reasoning.summary !== null ? true : undefined,
    });
  }
  noteUnknown(body, KNOWN, request.dropped);
  // Only OpenAI keeps responses; `store: false` asks for what every other family does anyway.
  if (body.store === true) request.dropped.push('store');
  return request;
}

function encodeContent(parts: readonly Part[], role: 'user' | 'assistant'): Json[] {
  return parts.flatMap((part): Json[] => {
    if (part.type === 'text') return [{ type: role === 'user' ? 'input_text' : 'output_text', text: part.text }];
    if (part.type === 'image' && role === 'user')
      return [
        compact({
          type: 'input_image',
          image_url: part.source.kind === 'base64' ? `data:${part.source.mediaType};base64,${part.source.data}` : part.source.url,
          detail: part.detail ?? 'auto',
        }),
      ];
    return [];
  });
}

/**
 * A tool result's `output`: one text block stays a plain string; several blocks, or any image,
 * become the list of `input_text` and `input_image` items the Responses API also takes, in order.
 */
function functionOutput(content: readonly (TextPart | ImagePart)[]): string | Json[] {
  if (content.length === 0) return '';
  const only = content[0]!;
  if (content.length === 1 && only.type === 'text') return only.text;
  return encodeContent(content, 'user');
}

/** Function tools, with flattened namespace functions grouped back into their `namespace` tools. */
function encodeTools(tools: readonly ToolDefinition[]): Json[] {
  const out: Json[] = [];
  const groups = new Map<string, Json[]>();
  for (const t of tools) {
    const name = t.group ? t.group.name : t.name;
    const fn = t.custom
      ? compact({ type: 'custom', name, description: t.custom.description, format: t.custom.format })
      : compact({ type: 'function', name, description: t.description, parameters: t.parameters, strict: t.strict ?? false });
    if (!t.group) {
      out.push(fn);
      continue;
    }
    let members = groups.get(t.group.namespace);
    if (!members) {
      members = [];
      groups.set(t.group.namespace, members);
      out.push(compact({ type: 'namespace', name: t.group.namespace, description: t.group.description, tools: members }));
    }
    members.push(fn);
  }
  return out;
}

/** Writes an OpenAI Responses request body. */
export function encodeResponsesRequest(request: ChatRequest): Json {
  if (request.candidates !== undefined && request.candidates > 1) unsupported('n', 'the Responses API returns one answer per request');
  const input: Json[] = request.system.slice(1).map((text) => ({ role: 'developer', content: text }));
  const namespaces = responsesToolsOf(request);
  const calls = toolNamesById(request.messages);
  request.messages.forEach((message, i) => {
    if (message.role === 'assistant') {
      const text = message.parts.filter((p) => p.type === 'text');
      if (text.length > 0) input.push({ type: 'message', role: 'assistant', content: encodeContent(text, 'assistant') });
      for (const part of message.parts)
        if (part.type === 'tool_call') input.push(responsesCallItem(part.name, part.id, part.arguments, namespaces));
      return;
    }
    for (const part of message.parts) {
      if (part.type !== 'tool_result') continue;
      dropResultError(request, part, `messages[${i}]`);
      const called = namespaces?.get(calls.get(part.callId) ?? '');
      const output = functionOutput(part.content);
      input.push(
        called?.custom
          ? { type: 'custom_tool_call_output', call_id: part.callId, output: typeof output === 'string' ? output : JSON.stringify(output) }
          : { type: 'function_call_output', call_id: part.callId, output },
      );
    }
    const rest = message.parts.filter((p) => p.type === 'text' || p.type === 'image');
    if (rest.length > 0) input.push({ type: 'message', role: 'user', content: encodeContent(rest, 'user') });
  });
  const body: Json = { model: request.model, input };
  if (request.system.length > 0) body.instructions = request.system[0];
  if (request.stream) body.stream = true;
  // Nothing the client sent asked OpenAI to keep the conversation.
  body.store = false;
  if (request.tools) body.tools = encodeTools(request.tools);
  const choice = request.toolChoice;
  if (choice) body.tool_choice = choice.type === 'tool' ? { type: 'function', name: choice.name } : choice.type;
  compact(
    Object.assign(body, {
      parallel_tool_calls: request.parallelToolCalls,
      max_output_tokens: request.maxTokens,
      temperature: request.temperature,
      top_p: request.topP,
      user: request.user,
    }),
  );
  const format = request.responseFormat;
  if (format?.type === 'json') body.text = { format: { type: 'json_object' } };
  else if (format?.type === 'json_schema')
    body.text = {
      format: compact({
        type: 'json_schema',
        name: format.name ?? 'response',
        description: format.description,
        schema: format.schema,
        strict: format.strict,
      }),
    };
  else if (format?.type === 'text') body.text = { format: { type: 'text' } };
  const effort = effortOf(request.reasoning);
  if (effort) body.reasoning = compact({ effort, summary: request.reasoning?.includeThoughts ? 'auto' : undefined });
  dropSettings(request, [
    ['stop', 'stop'],
    ['topK', 'top_k'],
    ['seed', 'seed'],
    ['presencePenalty', 'presence_penalty'],
    ['frequencyPenalty', 'frequency_penalty'],
  ]);
  return body;
}
