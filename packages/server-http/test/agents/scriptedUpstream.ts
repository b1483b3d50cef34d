/**
 * A scripted model of one upstream family (OpenAI chat, OpenAI Responses,
 * Anthropic Messages, Gemini) on loopback, for driving the real coding-agent
 * CLIs through the gateway. It plays one tool-calling turn: while the
 * request offers the scripted tool and carries no tool result, it streams a
 * call of that tool (after a reasoning/thinking block when asked); then it
 * streams the final text. Requests that do not offer the tool (a CLI's side
 * requests: titles, next-speaker checks) get the final text too, plain or
 * streamed as asked; token counts are answered in the family's shape. A
 * Gemini 3 model (by name) checks thought signatures on function calls as
 * Google's does.
 * Every request is recorded for the test to inspect.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Family = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';
export const FAMILIES: readonly Family[] = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'];
export type Json = Record<string, unknown>;

/** The turn the scripted model plays. */
export interface Scenario {
  /** The client's tool the model calls (`exec_command`, `Bash`, `run_shell_command`, …). */
  tool: string;
  args: Json;
  /** The text the model answers once the tool's result is back. */
  finalText: string;
  /** Stream a reasoning (thinking) block before the tool call. */
  reasoning?: boolean;
}

/** What the scripted model "thinks" before calling the tool, when the scenario asks for reasoning. */
export const REASONING_TEXT = 'The user wants a file; I will use the tool.';

export interface RecordedUpstreamRequest {
  path: string;
  body: Json;
  /** When it arrived, in ms since the upstream started (for the transcript: where a slow CLI spends its time). */
  atMs: number;
}

/** The result of a tool call the request carries (the second turn of the exchange), as JSON text. */
export function toolResultOf(family: Family, body: Json): string | undefined {
  if (family === 'openai-chat') {
    const message = ((body.messages ?? []) as Json[]).find((m) => m.role === 'tool');
    return message === undefined ? undefined : JSON.stringify(message.content);
  }
  if (family === 'openai-responses') {
    const input = Array.isArray(body.input) ? (body.input as Json[]) : [];
    const item = input.find((i) => i.type === 'function_call_output');
    return item === undefined ? undefined : JSON.stringify(item.output);
  }
  if (family === 'anthropic') {
    for (const m of (body.messages ?? []) as Json[])
      for (const block of Array.isArray(m.content) ? (m.content as Json[]) : [])
        if (block.type === 'tool_result') return JSON.stringify(block.content);
    return undefined;
  }
  for (const c of (body.contents ?? []) as Json[])
    for (const part of (c.parts ?? []) as Json[]) if (part.functionResponse) return JSON.stringify(part.functionResponse);
  return undefined;
}

/** The names of the functions the upstream request offers (`namespace.name` for a Responses namespace). */
export function offeredTools(family: Family, body: Json): string[] {
  const tools = (body.tools ?? []) as Json[];
  if (family === 'openai-chat') return tools.map((t) => (t.function as Json | undefined)?.name as string);
  if (family === 'anthropic') return tools.map((t) => t.name as string);
  if (family === 'openai-responses')
    return tools.flatMap((t) =>
      t.type === 'namespace'
        ? ((t.tools ?? []) as Json[]).map((f) => `${t.name}.${f.name}`)
        : t.type === 'function' || t.type === 'custom'
          ? [t.name as string]
          : [],
    );
  return tools.flatMap((t) => ((t.functionDeclarations ?? []) as Json[]).map((d) => d.name as string));
}

const sse = (data: unknown, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

function openAiChatStream(model: string, scenario: Scenario, call: boolean): string[] {
  const args = JSON.stringify(scenario.args);
  const chunk = (delta: Json, finish: string | null = null) =>
    sse({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }] });
  const thinking = call && scenario.reasoning ? [chunk({ reasoning_content: REASONING_TEXT })] : [];
  const body = call
    ? [
        chunk({ role: 'assistant', content: null }),
        ...thinking,
        chunk({ tool_calls: [{ index: 0, id: 'call_s1', type: 'function', function: { name: scenario.tool, arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, 9) } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(9) } }] }),
        chunk({}, 'tool_calls'),
      ]
    : [
        chunk({ role: 'assistant', content: '' }),
        chunk({ content: scenario.finalText.slice(0, 6) }),
        chunk({ content: scenario.finalText.slice(6) }),
        chunk({}, 'stop'),
      ];
  const usage = { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 };
  return [...body, sse({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model, choices: [], usage }), 'data: [DONE]\n\n'];
}

function responsesStream(model: string, scenario: Scenario, call: boolean): string[] {
  const args = JSON.stringify(scenario.args);
  const envelope = (status: string, output: Json[]) => ({
    id: 'resp_s',
    object: 'response',
    created_at: 1,
    status,
    model,
    output,
    usage: null,
  });
  const events: string[] = [];
  let seq = 0;
  const emit = (data: Json) => events.push(sse({ ...data, sequence_number: seq++ }, data.type as string));
  emit({ type: 'response.created', response: envelope('in_progress', []) });
  const output: Json[] = [];
  if (call && scenario.reasoning) {
    const summary = [{ type: 'summary_text', text: REASONING_TEXT }];
    const reasoning = { id: 'rs_s1', type: 'reasoning', summary };
    emit({ type: 'response.output_item.added', output_index: 0, item: { ...reasoning, summary: [] } });
    emit({
      type: 'response.reasoning_summary_part.added',
      item_id: 'rs_s1',
      output_index: 0,
      summary_index: 0,
      part: { type: 'summary_text', text: '' },
    });
    emit({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_s1', output_index: 0, summary_index: 0, delta: REASONING_TEXT });
    emit({ type: 'response.reasoning_summary_text.done', item_id: 'rs_s1', output_index: 0, summary_index: 0, text: REASONING_TEXT });
    emit({ type: 'response.reasoning_summary_part.done', item_id: 'rs_s1', output_index: 0, summary_index: 0, part: summary[0] });
    emit({ type: 'response.output_item.done', output_index: 0, item: reasoning });
    output.push(reasoning);
  }
  const index = output.length;
  const item = call
    ? { id: 'fc_s1', type: 'function_call', status: 'completed', call_id: 'call_s1', name: scenario.tool, arguments: args }
    : {
        id: 'msg_s1',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: scenario.finalText, annotations: [] }],
      };
  emit({
    type: 'response.output_item.added',
    output_index: index,
    item: call ? { ...item, status: 'in_progress', arguments: '' } : { ...item, status: 'in_progress', content: [] },
  });
  if (call) emit({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index: index, delta: args });
  else emit({ type: 'response.output_text.delta', item_id: item.id, output_index: index, content_index: 0, delta: scenario.finalText });
  emit({ type: 'response.output_item.done', output_index: index, item });
  output.push(item);
  const usage = { input_tokens: 20, output_tokens: 5, total_tokens: 25 };
  emit({ type: 'response.completed', response: { ...envelope('completed', output), usage } });
  return events;
}

function anthropicStream(model: string, scenario: Scenario, call: boolean): string[] {
  const args = JSON.stringify(scenario.args);
  const events = [
    sse(
      {
        type: 'message_start',
        message: {
          ...{ id: 'msg_s', type: 'message', role: 'assistant', model, content: [] },
          ...{ stop_reason: null, stop_sequence: null, usage: { input_tokens: 20, output_tokens: 1 } },
        },
      },
      'message_start',
    ),
  ];
  const block = (index: number, start: Json, deltas: Json[]) => {
    events.push(sse({ type: 'content_block_start', index, content_block: start }, 'content_block_start'));
    for (const delta of deltas) events.push(sse({ type: 'content_block_delta', index, delta }, 'content_block_delta'));
    events.push(sse({ type: 'content_block_stop', index }, 'content_block_stop'));
  };
  let index = 0;
  if (call && scenario.reasoning)
    block(index++, { type: 'thinking', thinking: '', signature: '' }, [
      { type: 'thinking_delta', thinking: REASONING_TEXT },
      { type: 'signature_delta', signature: 'c2NyaXB0ZWQ=' },
    ]);
  if (call)
    block(index, { type: 'tool_use', id: 'toolu_s1', name: scenario.tool, input: {} }, [
      { type: 'input_json_delta', partial_json: args.slice(0, 9) },
      { type: 'input_json_delta', partial_json: args.slice(9) },
    ]);
  else block(index, { type: 'text', text: '' }, [{ type: 'text_delta', text: scenario.finalText }]);
  const stop = { stop_reason: call ? 'tool_use' : 'end_turn', stop_sequence: null };
  events.push(sse({ type: 'message_delta', delta: stop, usage: { output_tokens: 5 } }, 'message_delta'));
  events.push(sse({ type: 'message_stop' }, 'message_stop'));
  return events;
}

function geminiStream(model: string, scenario: Scenario, call: boolean): string[] {
  const usageMetadata = { promptTokenCount: 20, candidatesTokenCount: 5, totalTokenCount: 25 };
  const chunk = (parts: Json[], finishReason?: string) =>
    sse({
      candidates: [{ content: { role: 'model', parts }, index: 0, ...(finishReason ? { finishReason } : {}) }],
      ...(finishReason ? { usageMetadata } : {}),
      modelVersion: model,
    });
  const thinking = call && scenario.reasoning ? [chunk([{ text: REASONING_TEXT, thought: true }])] : [];
  // Gemini signs the function calls of a thinking model, on the call's own part.
  const part = call
    ? { functionCall: { name: scenario.tool, args: scenario.args }, thoughtSignature: GEMINI_CALL_SIGNATURE }
    : { text: scenario.finalText };
  return [...thinking, chunk([part], 'STOP')];
}

/** The signature the scripted Gemini model puts on its function call. */
const GEMINI_CALL_SIGNATURE = 'c2NyaXB0ZWQtY2FsbA==';

/**
 * Gemini 3's check (https://ai.google.dev/gemini-api/docs/thought-signatures): in the current
 * turn (the model's parts after the last user text), the first function call of each step must
 * carry a thought signature, else 400. Returns the refusal, or undefined.
 */
function missingCallSignature(model: string, body: Json): Json | undefined {
  if (!/^gemini-([3-9]|\d\d)/.test(model)) return undefined;
  const contents = (body.contents ?? []) as { role?: string; parts?: Json[] }[];
  const lastUserText = contents.findLastIndex((c) => c.role !== 'model' && (c.parts ?? []).some((p) => typeof p.text === 'string'));
  for (const content of contents.slice(lastUserText + 1)) {
    const firstCall = (content.parts ?? []).find((p) => p.functionCall);
    if (content.role === 'model' && firstCall && typeof firstCall.thoughtSignature !== 'string')
      return {
        error: {
          code: 400,
          message: 'Function call is missing a thought_signature in functionCall parts.',
          status: 'INVALID_ARGUMENT',
        },
      };
  }
  return undefined;
}

const STREAMS: Record<Family, (model: string, scenario: Scenario, call: boolean) => string[]> = {
  'openai-chat': openAiChatStream,
  'openai-responses': responsesStream,
  anthropic: anthropicStream,
  gemini: geminiStream,
};

/** A plain (not streamed) text answer, for a CLI's side requests. */
function plainText(family: Family, model: string, text: string): Json {
  if (family === 'openai-chat')
    return {
      id: 'chatcmpl-p',
      object: 'chat.completion',
      created: 1,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
    };
  if (family === 'openai-responses')
    return {
      ...{ id: 'resp_p', object: 'response', created_at: 1, status: 'completed', model },
      output: [
        {
          ...{ id: 'msg_p', type: 'message', status: 'completed', role: 'assistant' },
          content: [{ type: 'output_text', text, annotations: [] }],
        },
      ],
      usage: { input_tokens: 20, output_tokens: 5, total_tokens: 25 },
    };
  if (family === 'anthropic')
    return {
      ...{ id: 'msg_p', type: 'message', role: 'assistant', model, content: [{ type: 'text', text }] },
      ...{ stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 20, output_tokens: 5 } },
    };
  return {
    candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 5, totalTokenCount: 25 },
    modelVersion: model,
  };
}

/** Whether the request asks for a stream, in the family's way (a body flag, or Gemini's method name). */
export function streams(family: Family, path: string, body: Json): boolean {
  return family === 'gemini' ? path.includes(':streamGenerateContent') : body.stream === true;
}

/** The family's token-count answer, or undefined when `path` is not a token count. */
function tokenCount(path: string): Json | undefined {
  if (path.includes('/messages/count_tokens')) return { input_tokens: 42 };
  if (path.includes(':countTokens')) return { totalTokens: 42 };
  return undefined;
}

export interface ScriptedUpstream {
  url: string;
  /** Every request, in order. */
  requests: RecordedUpstreamRequest[];
  /** The requests that offered the scenario's tool: the turns of the exchange. */
  turns(): RecordedUpstreamRequest[];
  close(): Promise<void>;
}

/** Starts a scripted upstream of `family` on 127.0.0.1 playing `scenario`. */
export async function startScriptedUpstream(family: Family, scenario: Scenario): Promise<ScriptedUpstream> {
  const requests: RecordedUpstreamRequest[] = [];
  const startedAt = performance.now();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Json;
      requests.push({ path, body, atMs: Math.round(performance.now() - startedAt) });
      const count = tokenCount(path);
      if (count) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(count));
        return;
      }
      const model = family === 'gemini' ? (path.split('/models/')[1]?.split(':')[0] ?? 'm') : String(body.model);
      const refusal = family === 'gemini' ? missingCallSignature(model, body) : undefined;
      if (refusal) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(refusal));
        return;
      }
      const call = offeredTools(family, body).includes(scenario.tool) && toolResultOf(family, body) === undefined;
      if (!streams(family, path, body)) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(plainText(family, model, scenario.finalText)));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of STREAMS[family](model, scenario, call)) res.write(event);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    turns: () => requests.filter((r) => tokenCount(r.path) === undefined && offeredTools(family, r.body).includes(scenario.tool)),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
