/**
 * @module openaiChat/request
 * OpenAI chat completions requests (`POST /v1/chat/completions`) in and out
 * of the neutral model: system and developer messages, text and image parts
 * (data URLs and links), tools (and the legacy `functions`), tool calls and
 * `tool` messages, sampling settings, `response_format` and
 * `reasoning_effort`.
 */

import type { DecodeContext, EncodeRequestOptions } from '../codec.js';
import {
  dropResultError,
  dropResultImages,
  dropSetting,
  effortOf,
  noteSettingPath,
  readNumericSettings,
  resultContentAt,
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
  parseDataUrl,
  string,
  stringList,
  unsupported,
} from '../fields.js';
import type { ChatRequest, ImagePart, Message, Part, ReasoningEffort, TextPart, ToolChoice, ToolDefinition } from '../ir.js';

const KNOWN = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'functions',
  'function_call',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'top_k',
  'stop',
  'seed',
  'presence_penalty',
  'frequency_penalty',
  'response_format',
  'reasoning_effort',
  'user',
  'n',
]);

const EFFORTS = new Set(['minimal', 'low', 'medium', 'high']);

/** The text parts of a message that holds only text, one string per part. */
function textParts(content: unknown, path: string): string[] {
  if (typeof content === 'string') return [content];
  if (content === null || content === undefined) return [];
  return array(content, path).map((part, i) => {
    const p = object(part, `${path}[${i}]`);
    if (p.type === 'text' || p.type === 'refusal') return string(p.text ?? p.refusal, `${path}[${i}].text`);
    return invalid(`${path}[${i}].type`, 'must be "text" in this message');
  });
}

/**
 * An assistant's (or a legacy function result's) text as one string. Its
 * parts join with nothing: they are one answer cut up (Anthropic, for one,
 * splits an answer's text into blocks around each citation).
 */
function textOf(content: unknown, path: string): string {
  return textParts(content, path).join('');
}

/** An `image_url` part's image (`url` a data URL or a link). */
export function imageFromUrl(url: string, detail: unknown, path: string): ImagePart {
  const data = parseDataUrl(url);
  const image: ImagePart = data
    ? { type: 'image', source: { kind: 'base64', mediaType: data.mediaType, data: data.data } }
    : /^https?:\/\//i.test(url)
      ? { type: 'image', source: { kind: 'url', url } }
      : invalid(path, 'must be an http(s) URL or a base64 data URL');
  if (typeof detail === 'string') image.detail = detail;
  return image;
}

function userParts(content: unknown, path: string): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  // No content is an empty turn: families that refuse one say so, naming this field.
  if (content === null || content === undefined) return [];
  return array(content, path).map((raw, i): Part => {
    const partPath = `${path}[${i}]`;
    const part = object(raw, partPath);
    switch (part.type) {
      case 'text':
        return { type: 'text', text: string(part.text, `${partPath}.text`) };
      case 'image_url': {
        const image = object(part.image_url, `${partPath}.image_url`);
        return imageFromUrl(string(image.url, `${partPath}.image_url.url`), image.detail, `${partPath}.image_url.url`);
      }
      case 'input_audio':
      case 'file':
        return unsupported(`${partPath}.type`, `"${part.type}" parts cannot be translated to other API families`);
      default:
        return invalid(`${partPath}.type`, 'must be "text" or "image_url"');
    }
  });
}

function toolResultContent(content: unknown, path: string): (TextPart | ImagePart)[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return resultContentAt(userParts(content, path), path);
}

function decodeMessage(raw: unknown, path: string, request: ChatRequest): Message | undefined {
  const message = object(raw, path);
  const role = string(message.role, `${path}.role`);
  switch (role) {
    case 'system':
    case 'developer':
      // Each part stays a block of its own: separate instructions are not glued into one word-run.
      request.system.push(...textParts(message.content, `${path}.content`));
      return undefined;
    case 'user':
      return { role: 'user', parts: userParts(message.content, `${path}.content`), path: `${path}.content` };
    case 'tool':
      return {
        role: 'user',
        path: `${path}.content`,
        parts: [
          {
            type: 'tool_result',
            callId: string(message.tool_call_id, `${path}.tool_call_id`),
            content: toolResultContent(message.content ?? '', `${path}.content`),
          },
        ],
      };
    case 'function': {
      const name = string(message.name, `${path}.name`);
      return {
        role: 'user',
        parts: [{ type: 'tool_result', callId: name, name, content: [{ type: 'text', text: textOf(message.content, `${path}.content`) }] }],
        path: `${path}.content`,
      };
    }
    case 'assistant': {
      const parts: Part[] = [];
      const reasoning = message.reasoning_content ?? message.reasoning;
      if (typeof reasoning === 'string' && reasoning.length > 0) parts.push({ type: 'thinking', text: reasoning });
      const text = textOf(message.content, `${path}.content`);
      if (text.length > 0) parts.push({ type: 'text', text });
      if (message.tool_calls !== undefined && message.tool_calls !== null) {
        array(message.tool_calls, `${path}.tool_calls`).forEach((rawCall, j) => {
          const callPath = `${path}.tool_calls[${j}]`;
          const call = object(rawCall, callPath);
          const fn = object(call.function, `${callPath}.function`);
          parts.push({
            type: 'tool_call',
            id: string(call.id, `${callPath}.id`),
            name: string(fn.name, `${callPath}.function.name`),
            arguments: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}),
          });
        });
      }
      if (isObject(message.function_call)) {
        const fn = message.function_call;
        const name = string(fn.name, `${path}.function_call.name`);
        parts.push({ type: 'tool_call', id: name, name, arguments: typeof fn.arguments === 'string' ? fn.arguments : '{}' });
      }
      return { role: 'assistant', parts, path: `${path}.content` };
    }
    default:
      return invalid(`${path}.role`, 'must be one of system, developer, user, assistant, tool');
  }
}

function decodeTools(body: Json, request: ChatRequest): void {
  const tools: ToolDefinition[] = [];
  if (body.tools !== undefined && body.tools !== null) {
    array(body.tools, 'tools').forEach((raw, i) => {
      const tool = object(raw, `tools[${i}]`);
      if (tool.type !== 'function')
        unsupported(`tools[${i}].type`, `tool type ${JSON.stringify(tool.type)} has no equivalent in other families`);
      tools.push(functionDefinition(tool.function, `tools[${i}].function`));
    });
  }
  if (body.functions !== undefined && body.functions !== null) {
    array(body.functions, 'functions').forEach((raw, i) => {
      tools.push(functionDefinition(raw, `functions[${i}]`));
    });
  }
  if (tools.length > 0) request.tools = tools;
  const choice = body.tool_choice ?? body.function_call;
  const choicePath = body.tool_choice !== undefined ? 'tool_choice' : 'function_call';
  if (choice !== undefined && choice !== null) {
    request.toolChoice = decodeToolChoice(choice, choicePath);
    noteSettingPath(request, 'toolChoice', choicePath);
  }
  const parallel = optionalBoolean(body.parallel_tool_calls, 'parallel_tool_calls');
  if (parallel !== undefined) request.parallelToolCalls = parallel;
}

function functionDefinition(raw: unknown, path: string): ToolDefinition {
  const fn = object(raw, path);
  const tool: ToolDefinition = {
    name: string(fn.name, `${path}.name`),
    parameters: fn.parameters === undefined ? { type: 'object', properties: {} } : object(fn.parameters, `${path}.parameters`),
  };
  const description = optionalString(fn.description, `${path}.description`);
  if (description !== undefined) tool.description = description;
  const strict = optionalBoolean(fn.strict, `${path}.strict`);
  if (strict !== undefined) tool.strict = strict;
  return tool;
}

function decodeToolChoice(choice: unknown, path: string): ToolChoice {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return { type: choice };
  const object_ = object(choice, path);
  const fn = isObject(object_.function) ? object_.function : object_;
  return { type: 'tool', name: string(fn.name, `${path}.function.name`) };
}

function decodeResponseFormat(raw: unknown, request: ChatRequest): void {
  if (raw === undefined || raw === null) return;
  const format = object(raw, 'response_format');
  if (format.type === 'text') request.responseFormat = { type: 'text' };
  else if (format.type === 'json_object') request.responseFormat = { type: 'json' };
  else if (format.type === 'json_schema') {
    const spec = object(format.json_schema, 'response_format.json_schema');
    request.responseFormat = compact({
      type: 'json_schema' as const,
      schema: spec.schema === undefined ? {} : object(spec.schema, 'response_format.json_schema.schema'),
      name: optionalString(spec.name, 'response_format.json_schema.name'),
      description: optionalString(spec.description, 'response_format.json_schema.description'),
      strict: optionalBoolean(spec.strict, 'response_format.json_schema.strict'),
    });
  } else invalid('response_format.type', 'must be text, json_object or json_schema');
}

/** Reads an OpenAI chat completions request body. */
export function decodeChatRequest(body: Json, context: DecodeContext): ChatRequest {
  const request: ChatRequest = { model: context.model, stream: context.stream, system: [], messages: [], dropped: [] };
  array(body.messages, 'messages').forEach((raw, i) => {
    const message = decodeMessage(raw, `messages[${i}]`, request);
    if (message) request.messages.push(message);
  });
  decodeTools(body, request);
  // The newer field wins, unless it is only there as null (some clients send every field).
  const limitField =
    body.max_completion_tokens !== undefined && body.max_completion_tokens !== null ? 'max_completion_tokens' : 'max_tokens';
  readNumericSettings(request, [
    ['maxTokens', body[limitField], limitField],
    ['temperature', body.temperature, 'temperature'],
    ['topP', body.top_p, 'top_p'],
    ['topK', body.top_k, 'top_k'],
    ['seed', body.seed, 'seed'],
    ['presencePenalty', body.presence_penalty, 'presence_penalty'],
    ['frequencyPenalty', body.frequency_penalty, 'frequency_penalty'],
    ['candidates', body.n, 'n'],
  ]);
  const stop = stringList(body.stop, 'stop');
  if (stop) request.stop = stop;
  const user = optionalString(body.user, 'user');
  if (user !== undefined) request.user = user;
  decodeResponseFormat(body.response_format, request);
  if (body.reasoning_effort !== undefined && body.reasoning_effort !== null) {
    const effort = string(body.reasoning_effort, 'reasoning_effort');
    if (!EFFORTS.has(effort)) invalid('reasoning_effort', 'must be minimal, low, medium or high');
    request.reasoning = { effort: effort as ReasoningEffort };
    noteSettingPath(request, 'reasoning', 'reasoning_effort');
  }
  if (isObject(body.stream_options) && body.stream_options.include_usage === true) request.streamUsage = true;
  noteUnknown(body, KNOWN, request.dropped);
  return request;
}

function contentOf(parts: Part[]): string | Json[] {
  const visible = parts.filter((p) => p.type === 'text' || p.type === 'image');
  if (visible.length === 1 && visible[0]!.type === 'text') return visible[0]!.text;
  return visible.map((part) =>
    part.type === 'text'
      ? { type: 'text', text: part.text }
      : {
          type: 'image_url',
          image_url: compact({
            url: part.source.kind === 'base64' ? `data:${part.source.mediaType};base64,${part.source.data}` : part.source.url,
            detail: part.detail,
          }),
        },
  );
}

function encodeMessages(request: ChatRequest): Json[] {
  const out: Json[] = request.system.map((text) => ({ role: 'system', content: text }));
  request.messages.forEach((message, i) => {
    if (message.role === 'assistant') {
      const text = message.parts
        .filter((p) => p.type === 'text')
        .map((p) => p.text)
        .join('');
      const calls = message.parts.filter((p) => p.type === 'tool_call');
      const encoded: Json = { role: 'assistant', content: text.length > 0 || calls.length === 0 ? text : null };
      if (calls.length > 0)
        encoded.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
      out.push(encoded);
      return;
    }
    for (const part of message.parts) {
      if (part.type !== 'tool_result') continue;
      const texts = part.content.filter((c) => c.type === 'text');
      if (texts.length < part.content.length) dropResultImages(request, part, `messages[${i}]`);
      dropResultError(request, part, `messages[${i}]`);
      // Several text blocks stay several parts (a tool message takes an array of text parts); one stays a string.
      const content = texts.length > 1 ? texts.map((t) => ({ type: 'text', text: t.text })) : (texts[0]?.text ?? '');
      out.push({ role: 'tool', tool_call_id: part.callId, content });
    }
    const rest = message.parts.filter((p) => p.type === 'text' || p.type === 'image');
    if (rest.length > 0) out.push({ role: 'user', content: contentOf(rest) });
  });
  return out;
}

function encodeToolChoice(choice: ToolChoice): unknown {
  return choice.type === 'tool' ? { type: 'function', function: { name: choice.name } } : choice.type;
}

/** Writes an OpenAI chat completions request body. */
export function encodeChatRequest(request: ChatRequest, options: EncodeRequestOptions = {}): Json {
  const body: Json = { model: request.model, messages: encodeMessages(request) };
  if (request.stream) body.stream = true;
  // The relay counts tokens from the usage chunk, so it always asks for it.
  if (request.stream) body.stream_options = { include_usage: true };
  if (request.tools)
    body.tools = request.tools.map((t) => ({
      type: 'function',
      function: compact({ name: t.name, description: t.description, parameters: t.parameters, strict: t.strict }),
    }));
  if (request.toolChoice) body.tool_choice = encodeToolChoice(request.toolChoice);
  if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  if (request.maxTokens !== undefined) body[options.maxTokensField ?? 'max_tokens'] = request.maxTokens;
  compact(
    Object.assign(body, {
      temperature: request.temperature,
      top_p: request.topP,
      stop: request.stop,
      seed: request.seed,
      presence_penalty: request.presencePenalty,
      frequency_penalty: request.frequencyPenalty,
      user: request.user,
      n: request.candidates,
    }),
  );
  if (request.topK !== undefined) dropSetting(request, 'topK', 'top_k');
  const format = request.responseFormat;
  if (format?.type === 'json') body.response_format = { type: 'json_object' };
  else if (format?.type === 'json_schema')
    body.response_format = {
      type: 'json_schema',
      json_schema: compact({
        name: format.name ?? 'response',
        description: format.description,
        schema: format.schema,
        strict: format.strict,
      }),
    };
  else if (format?.type === 'text') body.response_format = { type: 'text' };
  const effort = effortOf(request.reasoning);
  if (effort) body.reasoning_effort = effort;
  return body;
}
