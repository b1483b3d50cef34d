/**
 * Benchmark of streaming translation: upstream chunks per second through
 * the stream translator (SSE parse → decode → neutral events → encode) for
 * every pair of API families, against the pass-through tap of the source
 * family (the byte path the relay takes when client and provider match),
 * measured in the same run. Each chunk is one realistic event: a text
 * delta of a few words, as providers stream them.
 *
 *   pnpm bench translation [--smoke]
 */

import { passThroughTap } from '@switchyard/relay';
import { API_FAMILIES, type ApiFamily, StreamTranslator } from '@switchyard/translate';
import { type Row, report, SMOKE, throughput } from './lib.js';

const DELTAS = SMOKE ? 200 : 2000;
const words = ['The ', 'quick ', 'brown ', 'fox ', 'jumps ', 'over ', 'the ', 'lazy ', 'dog. '];
const delta = (i: number) => `${words[i % words.length]}${words[(i + 3) % words.length]}`;

/** An upstream stream of `DELTAS` text deltas, one event per chunk, in a family's own shape. */
function upstreamChunks(family: ApiFamily): Buffer[] {
  const events: string[] = [];
  const sse = (data: unknown, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
  if (family === 'openai-chat') {
    const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o' };
    events.push(sse({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }));
    for (let i = 0; i < DELTAS; i++)
      events.push(sse({ ...base, choices: [{ index: 0, delta: { content: delta(i) }, finish_reason: null }] }));
    events.push(sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
    events.push(
      sse({ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: DELTAS, total_tokens: 10 + DELTAS } }),
      'data: [DONE]\n\n',
    );
  } else if (family === 'anthropic-messages') {
    events.push(
      sse(
        {
          type: 'message_start',
          message: {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            content: [],
            model: 'claude',
            usage: { input_tokens: 10, output_tokens: 1 },
          },
        },
        'message_start',
      ),
    );
    events.push(sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'));
    for (let i = 0; i < DELTAS; i++)
      events.push(sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: delta(i) } }, 'content_block_delta'));
    events.push(sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop'));
    events.push(
      sse(
        { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: DELTAS } },
        'message_delta',
      ),
    );
    events.push(sse({ type: 'message_stop' }, 'message_stop'));
  } else if (family === 'gemini') {
    const chunk = (text: string, finish?: string) => ({
      candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0, ...(finish ? { finishReason: finish } : {}) }],
      usageMetadata: {
        promptTokenCount: 10,
        ...(finish ? { candidatesTokenCount: DELTAS, totalTokenCount: 10 + DELTAS } : { totalTokenCount: 10 }),
      },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'r1',
    });
    for (let i = 0; i < DELTAS; i++) events.push(sse(chunk(delta(i))));
    events.push(sse(chunk('', 'STOP')));
  } else {
    let n = 0;
    const ev = (type: string, data: Record<string, unknown>) => sse({ type, sequence_number: n++, ...data }, type);
    const where = { item_id: 'msg_1', output_index: 0, content_index: 0 };
    events.push(
      ev('response.created', { response: { id: 'resp_1', object: 'response', status: 'in_progress', model: 'gpt-4.1', output: [] } }),
    );
    events.push(
      ev('response.output_item.added', {
        output_index: 0,
        item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
      }),
    );
    events.push(ev('response.content_part.added', { ...where, part: { type: 'output_text', text: '', annotations: [] } }));
    for (let i = 0; i < DELTAS; i++) events.push(ev('response.output_text.delta', { ...where, delta: delta(i), logprobs: [] }));
    events.push(
      ev('response.completed', {
        response: {
          id: 'resp_1',
          object: 'response',
          status: 'completed',
          model: 'gpt-4.1',
          output: [],
          usage: { input_tokens: 10, output_tokens: DELTAS, total_tokens: 10 + DELTAS },
        },
      }),
    );
  }
  return events.map((e) => Buffer.from(e));
}

const context = { model: 'client-model', requestId: 'bench', now: 0, includeUsage: true };
let sink = 0;
const rows: Row[] = [];
for (const from of API_FAMILIES) {
  const chunks = upstreamChunks(from);
  const baseline = throughput(() => {
    const tap = passThroughTap(from, { stripUsageOnlyChunks: true, usageOf: () => undefined });
    for (const chunk of chunks) sink += tap.push(chunk).length;
    sink += tap.finish().length + (tap.usage?.output ?? 0);
    return chunks.length;
  });
  rows.push({ name: `${from}: pass-through (same family)`, value: baseline, unit: 'chunks/s' });
  for (const to of API_FAMILIES) {
    if (to === from) continue;
    const translated = throughput(() => {
      const translator = StreamTranslator.between(from, to, context);
      for (const chunk of chunks) sink += translator.push(chunk).length;
      sink += translator.finish().length;
      if (!translator.complete) throw new Error(`${from} → ${to}: the stream did not complete`);
      return chunks.length;
    });
    rows.push({
      name: `${from} → ${to}: translated`,
      value: translated,
      unit: 'chunks/s',
      baseline,
      target: '≥ 100,000/s',
      pass: translated >= 100_000,
    });
  }
}
if (sink === 0) throw new Error('unreachable');
report(`streaming translation, ${DELTAS} text deltas per stream`, rows);
