/**
 * @module gemini/request
 * Gemini `generateContent` requests in and out of the neutral model:
 * `systemInstruction`, `contents` with `user` and `model` turns, text,
 * `inlineData` and `fileData` images, `functionCall` and
 * `functionResponse` parts, `thought` parts with signatures,
 * `functionDeclarations`, `toolConfig`, and `generationConfig` (limits,
 * sampling, JSON output, `thinkingConfig`). Field names are read in
 * camelCase or snake_case, as Google's JSON mapping accepts both; they are
 * written in camelCase.
 *
 * Gemini answers tool results by function name, not by id: ids are made up
 * on the way in (`call_<n>`, results matched to the earliest unanswered
 * call of the same name) and names are looked up from ids on the way out.
 */

import type { DecodeContext } from '../codec.js';
import {
  budgetOf,
  dropSettings,
  EFFORT_BUDGETS,
  hostedTool,
  isBlank,
  noteSettingPath,
  readNumericSettings,
  sendableTurns,
  toolNamesById,
} from '../common.js';
import {
  array,
  compact,
  invalid,
  isObject,
  type Json,
  mediaTypeOfUrl,
  object,
  optionalBoolean,
  optionalInteger,
  optionalString,
  parseArguments,
  string,
  stringList,
  unsupported,
} from '../fields.js';
import type { ChatRequest, ImagePart, Message, Part, ReasoningEffort, TextPart, ToolDefinition } from '../ir.js';

const snakeNames = new Map<string, string>();
/** `thoughtSignature` → `thought_signature`, computed once per name (decoders call this per streamed part). */
function snake(camel: string): string {
  let name = snakeNames.get(camel);
  if (name === undefined) {
    name = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    snakeNames.set(camel, name);
  }
  return name;
}

/** A member by its camelCase name or its snake_case one. */
export function member(object_: Json, camel: string): unknown {
  const value = object_[camel];
  return value !== undefined ? value : object_[snake(camel)];
}

const KNOWN = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'model']);
const KNOWN_CONFIG = new Set([
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'candidateCount',
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'thinkingConfig',
]);
const LEVELS: Record<string, ReasoningEffort> = { minimal: 'minimal', low: 'low', medium: 'medium', high: 'high' };

/** OpenAPI-subset schemas write types in capitals (`OBJECT`); JSON Schema wants `object`. */
function lowerTypes(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lowerTypes);
  if (!isObject(schema)) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema))
    out[key] = key === 'type' && typeof value === 'string' ? value.toLowerCase() : lowerTypes(value);
  return out;
}

function resultContent(response: Json): (TextPart | ImagePart)[] {
  const keys = Object.keys(response);
  // Google's convention: `output` holds the result, `error` a failure; otherwise the whole object is the result.
  if (keys.length === 1 && (keys[0] === 'output' || keys[0] === 'error') && typeof response[keys[0]] === 'string')
    return [{ type: 'text', text: response[keys[0]] as string }];
  return [{ type: 'text', text: JSON.stringify(response) }];
}

interface IdState {
  count: number;
  open: { id: string; name: string }[];
}

function decodePart(raw: unknown, path: string, ids: IdState): Part | undefined {
  const part = object(raw, path);
  const signature = optionalString(member(part, 'thoughtSignature'), `${path}.thoughtSignature`);
  if (typeof part.text === 'string') {
    if (part.thought === true) return compact({ type: 'thinking' as const, text: part.text, signature });
    return { type: 'text', text: part.text };
  }
  const inline = member(part, 'inlineData');
  if (inline !== undefined) {
    const data = object(inline, `${path}.inlineData`);
    return {
      type: 'image',
      source: {
        kind: 'base64',
        mediaType: string(member(data, 'mimeType'), `${path}.inlineData.mimeType`),
        data: string(data.data, `${path}.inlineData.data`),
      },
    };
  }
  const file = member(part, 'fileData');
  if (file !== undefined) {
    const data = object(file, `${path}.fileData`);
    const mediaType = optionalString(member(data, 'mimeType'), `${path}.fileData.mimeType`);
    const url = string(member(data, 'fileUri'), `${path}.fileData.fileUri`);
    return { type: 'image', source: compact({ kind: 'url' as const, url, mediaType }) };
  }
  const call = member(part, 'functionCall');
  if (call !== undefined) {
    const fn = object(call, `${path}.functionCall`);
    const name = string(fn.name, `${path}.functionCall.name`);
    const id = optionalString(fn.id, `${path}.functionCall.id`) ?? `call_${ids.count++}`;
    ids.open.push({ id, name });
    return compact({
      type: 'tool_call' as const,
      id,
      name,
      arguments: JSON.stringify(fn.args === undefined ? {} : object(fn.args, `${path}.functionCall.args`)),
      signature,
    });
  }
  const response = member(part, 'functionResponse');
  if (response !== undefined) {
    const fn = object(response, `${path}.functionResponse`);
    const name = string(fn.name, `${path}.functionResponse.name`);
    let id = optionalString(fn.id, `${path}.functionResponse.id`);
    const openIndex = ids.open.findIndex((c) => (id ? c.id === id : c.name === name));
    if (openIndex >= 0) {
      id ??= ids.open[openIndex]!.id;
      ids.open.splice(openIndex, 1);
    }
    const body = fn.response === undefined ? {} : object(fn.response, `${path}.functionResponse.response`);
    const result: Part = { type: 'tool_result', callId: id ?? `call_${name}`, name, content: resultContent(body) };
    if (Object.keys(body).length === 1 && typeof body.error === 'string')
      Object.assign(result, { isError: true, errorPath: `${path}.functionResponse.response.error` });
    return result;
  }
  if (member(part, 'executableCode') !== undefined || member(part, 'codeExecutionResult') !== undefined)
    return unsupported(path, 'code execution parts cannot be translated to other API families');
  return invalid(path, 'must have text, inlineData, fileData, functionCall or functionResponse');
}

function decodeTools(body: Json, request: ChatRequest, context: DecodeContext): void {
  const tools = member(body, 'tools');
  if (tools !== undefined) {
    const definitions: ToolDefinition[] = [];
    array(tools, 'tools').forEach((raw, i) => {
      const tool = object(raw, `tools[${i}]`);
      // Google's own tools (`googleSearch`, `codeExecution`, `urlContext`, …) run at Google; one entry may hold several.
      for (const key of Object.keys(tool))
        if (key !== 'functionDeclarations' && key !== 'function_declarations')
          hostedTool(request, context, `tools[${i}].${key}`, `only functionDeclarations can be translated (got ${key})`, `tools[${i}]`);
      const declarations = member(tool, 'functionDeclarations');
      if (declarations === undefined) return;
      array(declarations, `tools[${i}].functionDeclarations`).forEach((d, j) => {
        const path = `tools[${i}].functionDeclarations[${j}]`;
        const declaration = object(d, path);
        const jsonSchema = member(declaration, 'parametersJsonSchema');
        const parameters = jsonSchema !== undefined ? object(jsonSchema, `${path}.parametersJsonSchema`) : declaration.parameters;
        definitions.push(
          compact({
            name: string(declaration.name, `${path}.name`),
            description: optionalString(declaration.description, `${path}.description`),
            parameters:
              parameters === undefined
                ? { type: 'object', properties: {} }
                : (lowerTypes(object(parameters, `${path}.parameters`)) as Json),
          }),
        );
      });
    });
    // Google's tools left out may leave none: an empty list is not sent.
    if (definitions.length > 0 || array(tools, 'tools').length === 0) request.tools = definitions;
  }
  const config = member(body, 'toolConfig');
  if (config === undefined) return;
  const calling = member(object(config, 'toolConfig'), 'functionCallingConfig');
  if (calling === undefined) return;
  const fc = object(calling, 'toolConfig.functionCallingConfig');
  const allowed = stringList(member(fc, 'allowedFunctionNames'), 'toolConfig.functionCallingConfig.allowedFunctionNames');
  switch (fc.mode) {
    case 'AUTO':
    case 'VALIDATED':
    case undefined:
      request.toolChoice = { type: 'auto' };
      break;
    case 'NONE':
      request.toolChoice = { type: 'none' };
      break;
    case 'ANY':
      request.toolChoice = allowed?.length === 1 ? { type: 'tool', name: allowed[0]! } : { type: 'required' };
      break;
    default:
      invalid('toolConfig.functionCallingConfig.mode', 'must be AUTO, ANY, NONE or VALIDATED');
  }
  noteSettingPath(request, 'toolChoice', 'toolConfig.functionCallingConfig');
}

function decodeGenerationConfig(body: Json, request: ChatRequest): void {
  const raw = member(body, 'generationConfig');
  if (raw === undefined || raw === null) return;
  const config = object(raw, 'generationConfig');
  const at = (name: string) => `generationConfig.${name}`;
  const fields = [
    ['maxTokens', 'maxOutputTokens'],
    ['temperature', 'temperature'],
    ['topP', 'topP'],
    ['topK', 'topK'],
    ['seed', 'seed'],
    ['presencePenalty', 'presencePenalty'],
    ['frequencyPenalty', 'frequencyPenalty'],
    ['candidates', 'candidateCount'],
  ] as const;
  readNumericSettings(
    request,
    fields.map(([key, name]) => [key, member(config, name), at(name)] as const),
  );
  const stop = stringList(member(config, 'stopSequences'), at('stopSequences'));
  if (stop) {
    request.stop = stop;
    noteSettingPath(request, 'stop', at('stopSequences'));
  }
  const mime = optionalString(member(config, 'responseMimeType'), at('responseMimeType'));
  const schema = member(config, 'responseJsonSchema') ?? member(config, 'responseSchema');
  if (schema !== undefined)
    request.responseFormat = { type: 'json_schema', schema: lowerTypes(object(schema, at('responseJsonSchema'))) as Json };
  else if (mime === 'application/json') request.responseFormat = { type: 'json' };
  else if (mime === 'text/plain') request.responseFormat = { type: 'text' };
  if (request.responseFormat)
    noteSettingPath(request, 'responseFormat', at(schema !== undefined ? 'responseJsonSchema' : 'responseMimeType'));
  const thinking = member(config, 'thinkingConfig');
  if (thinking !== undefined) {
    const t = object(thinking, at('thinkingConfig'));
    const budget = optionalInteger(member(t, 'thinkingBudget'), at('thinkingConfig.thinkingBudget'));
    const include = optionalBoolean(member(t, 'includeThoughts'), at('thinkingConfig.includeThoughts'));
    const level = optionalString(member(t, 'thinkingLevel'), at('thinkingConfig.thinkingLevel'));
    request.reasoning = compact({
      // -1 asks Gemini to choose; other families have no such setting.
      budgetTokens: budget !== undefined && budget >= 0 ? budget : undefined,
      effort: level ? LEVELS[level.toLowerCase()] : undefined,
      includeThoughts: include,
    });
    noteSettingPath(request, 'reasoning', at('thinkingConfig'));
  }
  for (const key of Object.keys(config)) {
    const camel = key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    if (!KNOWN_CONFIG.has(camel)) request.dropped.push(at(key));
  }
}

/** Reads a Gemini `generateContent` request body (the model and stream flag come from the URL). */
export function decodeGenerateContentRequest(body: Json, context: DecodeContext): ChatRequest {
  const request: ChatRequest = { model: context.model, stream: context.stream, system: [], messages: [], dropped: [] };
  const system = member(body, 'systemInstruction');
  if (system !== undefined && system !== null) {
    const instruction = typeof system === 'string' ? { parts: [{ text: system }] } : object(system, 'systemInstruction');
    array(instruction.parts, 'systemInstruction.parts').forEach((p, i) => {
      request.system.push(string(object(p, `systemInstruction.parts[${i}]`).text, `systemInstruction.parts[${i}].text`));
    });
  }
  const ids: IdState = { count: 0, open: [] };
  array(body.contents, 'contents').forEach((raw, i) => {
    const content = object(raw, `contents[${i}]`);
    const role = content.role ?? 'user';
    if (role !== 'user' && role !== 'model' && role !== 'function') invalid(`contents[${i}].role`, 'must be "user" or "model"');
    const parts = array(content.parts, `contents[${i}].parts`).flatMap((p, j) => decodePart(p, `contents[${i}].parts[${j}]`, ids) ?? []);
    request.messages.push({ role: role === 'model' ? 'assistant' : 'user', parts, path: `contents[${i}].parts` });
  });
  decodeTools(body, request, context);
  decodeGenerationConfig(body, request);
  for (const key of Object.keys(body)) {
    const camel = key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    if (!KNOWN.has(camel)) request.dropped.push(key);
  }
  return request;
}

function encodeImage(part: ImagePart): Json {
  if (part.source.kind === 'base64') return { inlineData: { mimeType: part.source.mediaType, data: part.source.data } };
  const mimeType = part.source.mediaType ?? mediaTypeOfUrl(part.source.url);
  return { fileData: compact({ mimeType, fileUri: part.source.url }) };
}

function resultResponse(part: Extract<Part, { type: 'tool_result' }>): Json {
  // A functionResponse holds one value: several text blocks join with a newline, which keeps their words apart.
  const text = part.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n');
  if (!part.isError) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (isObject(parsed)) return parsed;
    } catch {
      // Plain text: wrapped below.
    }
  }
  return part.isError ? { error: text } : { output: text };
}

/**
 * The signature Google documents for function calls a Gemini 3 model did not sign itself (a
 * conversation carried over from another model, calls a client of another family kept without
 * their signatures): it tells the validator to skip the check. Gemini 3 refuses an unsigned call
 * in the current turn with a 400 ("Function call is missing a thought_signature").
 */
export const UNSIGNED_CALL_SIGNATURE = 'skip_thought_signature_validator';

/** Whether `model` validates thought signatures on function calls (Gemini 3 and later, by name). */
export function validatesCallSignatures(model: string): boolean {
  const major = /(?:^|\/)gemini-(\d+)/.exec(model)?.[1];
  return major !== undefined && Number(major) >= 3;
}

function encodeParts(message: Message, path: string, names: Map<string, string>, signCalls: boolean): Json[] {
  const out: Json[] = [];
  // Gemini signs the first function call of a turn (parallel calls after it carry none): so does the fallback.
  let unsignedFallback = signCalls && message.role === 'assistant' && !message.parts.some((p) => p.type === 'tool_call' && p.signature);
  message.parts.forEach((part, j) => {
    switch (part.type) {
      case 'text':
        out.push({ text: part.text });
        break;
      case 'image':
        out.push(encodeImage(part));
        break;
      case 'thinking':
        out.push({ text: part.text, thought: true, thoughtSignature: part.signature });
        break;
      case 'tool_call': {
        const signature = part.signature ?? (unsignedFallback ? UNSIGNED_CALL_SIGNATURE : undefined);
        unsignedFallback = false;
        out.push(
          compact({
            functionCall: { name: part.name, args: parseArguments(part.arguments, `${path}.parts[${j}].arguments`) },
            thoughtSignature: signature,
          }),
        );
        break;
      }
      case 'tool_result': {
        const name = part.name ?? names.get(part.callId);
        if (!name) invalid(`${path}.tool_call_id`, `names no earlier tool call (${part.callId}); Gemini needs the function's name`);
        out.push({ functionResponse: { name, response: resultResponse(part) } });
        for (const item of part.content) if (item.type === 'image') out.push(encodeImage(item));
        break;
      }
    }
  });
  return out;
}

/** Only Gemini's own thoughts (signed) mean anything to Gemini. */
const sendsToGemini = (part: Part): boolean => part.type !== 'thinking' || (Boolean(part.signature) && part.redacted === undefined);

/** Writes a Gemini `generateContent` request body (no model or stream flag: those go in the URL). */
export function encodeGenerateContentRequest(request: ChatRequest): Json {
  const names = toolNamesById(request.messages);
  const signCalls = validatesCallSignatures(request.model);
  const contents = sendableTurns(request, sendsToGemini).map((message, i) => ({
    role: message.role === 'assistant' ? 'model' : 'user',
    parts: encodeParts(message, `messages[${i}]`, names, signCalls),
  }));
  const body: Json = { contents };
  // An empty text part is no part to Gemini ("required oneof field 'data'"): blank system prompts are left out.
  const system = request.system.filter((text) => !isBlank(text));
  if (system.length > 0) body.systemInstruction = { parts: system.map((text) => ({ text })) };
  if (request.tools)
    body.tools = [
      {
        functionDeclarations: request.tools.map((t) =>
          compact({ name: t.name, description: t.description, parametersJsonSchema: t.parameters }),
        ),
      },
    ];
  const choice = request.toolChoice;
  if (choice) {
    const mode = { auto: 'AUTO', none: 'NONE', required: 'ANY', tool: 'ANY' }[choice.type];
    body.toolConfig = {
      functionCallingConfig: compact({ mode, allowedFunctionNames: choice.type === 'tool' ? [choice.name] : undefined }),
    };
  }
  const config: Json = compact({
    maxOutputTokens: request.maxTokens,
    temperature: request.temperature,
    topP: request.topP,
    topK: request.topK,
    stopSequences: request.stop,
    seed: request.seed,
    presencePenalty: request.presencePenalty,
    frequencyPenalty: request.frequencyPenalty,
    candidateCount: request.candidates,
  });
  const format = request.responseFormat;
  if (format?.type === 'json') config.responseMimeType = 'application/json';
  else if (format?.type === 'json_schema')
    Object.assign(config, { responseMimeType: 'application/json', responseJsonSchema: format.schema });
  else if (format?.type === 'text') config.responseMimeType = 'text/plain';
  if (request.reasoning) {
    const budget =
      request.reasoning.budgetTokens ?? (request.reasoning.effort ? EFFORT_BUDGETS[request.reasoning.effort] : budgetOf(request.reasoning));
    config.thinkingConfig = compact({ thinkingBudget: budget, includeThoughts: request.reasoning.includeThoughts });
  }
  if (Object.keys(config).length > 0) body.generationConfig = config;
  dropSettings(request, [
    ['parallelToolCalls', 'parallel_tool_calls'],
    ['user', 'user'],
  ]);
  return body;
}
