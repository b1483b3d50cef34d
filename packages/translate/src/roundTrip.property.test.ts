import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { ApiFamily } from './apiFamily.js';
import { effortOf } from './common.js';
import { API_FAMILIES, codecFor, translateRequest } from './families.js';
import type { Json } from './fields.js';
import type { ChatRequest, Message, Part, ToolChoice } from './ir.js';

/** What each family can express, beyond the conversation itself. */
const CAN: Record<ApiFamily, ReadonlySet<string>> = {
  'openai-chat': new Set([
    'maxTokens',
    'temperature',
    'topP',
    'stop',
    'seed',
    'presencePenalty',
    'frequencyPenalty',
    'user',
    'parallelToolCalls',
    'toolChoice',
    'responseFormat',
    'effort',
  ]),
  'openai-responses': new Set([
    'maxTokens',
    'temperature',
    'topP',
    'user',
    'parallelToolCalls',
    'toolChoice',
    'responseFormat',
    'effort',
    'toolResultImages',
  ]),
  'anthropic-messages': new Set([
    'maxTokens',
    'temperature',
    'topP',
    'topK',
    'stop',
    'user',
    'toolChoice',
    'budget',
    'isError',
    'toolResultImages',
  ]),
  // Gemini's functionResponse holds no images: they travel as parts beside it.
  gemini: new Set([
    'maxTokens',
    'temperature',
    'topP',
    'topK',
    'stop',
    'seed',
    'presencePenalty',
    'frequencyPenalty',
    'toolChoice',
    'responseFormat',
    'budget',
    'isError',
  ]),
};
const both = (a: ApiFamily, b: ApiFamily, field: string) => CAN[a].has(field) && CAN[b].has(field);

const word = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ,.!?]{0,30}$/);
const name = fc.stringMatching(/^[a-z][a-z_]{0,11}$/);
const id = fc.stringMatching(/^[A-Za-z0-9_]{4,16}$/);
const base64 = fc.uint8Array({ minLength: 1, maxLength: 24 }).map((bytes) => Buffer.from(bytes).toString('base64'));
const image: fc.Arbitrary<Part> = fc.oneof(
  fc
    .record({ mediaType: fc.constantFrom('image/png', 'image/jpeg', 'image/webp', 'image/gif'), data: base64 })
    .map((s) => ({ type: 'image', source: { kind: 'base64', ...s } }) as Part),
  fc
    .record({ path: name, ext: fc.constantFrom('png', 'jpg', 'webp') })
    .map((u) => ({ type: 'image', source: { kind: 'url', url: `https://example.com/${u.path}.${u.ext}` } }) as Part),
);
const args = fc.dictionary(name, fc.oneof(word, fc.integer({ min: -1000, max: 1000 }), fc.boolean()), { maxKeys: 3 });

/** A conversation: user turns, and assistant turns whose tool calls the next user turn answers, in order. */
const conversation: fc.Arbitrary<Message[]> = fc
  .array(
    fc.record({
      user: fc.array(
        fc.oneof({ weight: 3, arbitrary: word.map((text) => ({ type: 'text', text }) as Part) }, { weight: 1, arbitrary: image }),
        { minLength: 1, maxLength: 3 },
      ),
      text: fc.option(word, { nil: undefined }),
      calls: fc.uniqueArray(fc.record({ id, name, args }), { maxLength: 2, selector: (c) => c.name }),
      results: fc.array(fc.record({ text: word, isError: fc.boolean(), image: fc.option(image, { nil: undefined }) }), {
        minLength: 2,
        maxLength: 2,
      }),
    }),
    { minLength: 1, maxLength: 3 },
  )
  .map((turns) => {
    const messages: Message[] = [];
    const seen = new Set<string>();
    for (const turn of turns) {
      const pending = messages.at(-1)?.role === 'assistant' ? messages.at(-1)!.parts.filter((p) => p.type === 'tool_call') : [];
      const results: Part[] = pending.map((call, i) => {
        const r = turn.results[i]!;
        return {
          type: 'tool_result',
          callId: (call as { id: string }).id,
          content: [{ type: 'text', text: r.text }, ...(r.image ? [r.image as never] : [])],
          ...(r.isError ? { isError: true } : {}),
        };
      });
      messages.push({ role: 'user', parts: [...results, ...turn.user] });
      const calls = turn.calls.filter((c) => !seen.has(c.id));
      for (const c of calls) seen.add(c.id);
      const parts: Part[] = [
        ...(turn.text ? [{ type: 'text', text: turn.text } as Part] : []),
        ...calls.map((c) => ({ type: 'tool_call', id: c.id, name: c.name, arguments: JSON.stringify(c.args) }) as Part),
      ];
      if (parts.length > 0) messages.push({ role: 'assistant', parts });
    }
    return messages;
  });

const toolChoice: fc.Arbitrary<ToolChoice> = fc.oneof(
  fc.constantFrom<ToolChoice>({ type: 'auto' }, { type: 'none' }, { type: 'required' }),
  name.map((n) => ({ type: 'tool', name: n }) as ToolChoice),
);

const request: fc.Arbitrary<ChatRequest> = fc
  .record({
    system: fc.array(word, { maxLength: 2 }),
    messages: conversation,
    tools: fc.uniqueArray(fc.record({ name, description: word }), { minLength: 1, maxLength: 2, selector: (t) => t.name }),
    toolChoice: fc.option(toolChoice, { nil: undefined }),
    parallelToolCalls: fc.option(fc.boolean(), { nil: undefined }),
    maxTokens: fc.integer({ min: 30_000, max: 60_000 }),
    temperature: fc.option(fc.double({ min: 0, max: 2, noNaN: true }), { nil: undefined }),
    topP: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
    topK: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
    stop: fc.option(fc.array(word, { minLength: 1, maxLength: 3 }), { nil: undefined }),
    seed: fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: undefined }),
    presencePenalty: fc.option(fc.double({ min: -2, max: 2, noNaN: true }), { nil: undefined }),
    user: fc.option(id, { nil: undefined }),
    responseFormat: fc.option(
      fc.constantFrom(
        { type: 'json' as const },
        { type: 'json_schema' as const, schema: { type: 'object', properties: { a: { type: 'string' } } } },
      ),
      { nil: undefined },
    ),
    effort: fc.option(fc.constantFrom('low' as const, 'medium' as const, 'high' as const), { nil: undefined }),
    budget: fc.option(fc.integer({ min: 1024, max: 24_000 }), { nil: undefined }),
  })
  .map((r) => {
    const out: ChatRequest = { model: 'm', stream: false, system: r.system, messages: r.messages, dropped: [], maxTokens: r.maxTokens };
    out.tools = r.tools.map((t) => ({
      name: t.name,
      description: t.description,
      parameters: { type: 'object', properties: { x: { type: 'string' } } },
    }));
    if (r.toolChoice) out.toolChoice = r.toolChoice.type === 'tool' ? { type: 'tool', name: out.tools[0]!.name } : r.toolChoice;
    for (const key of [
      'parallelToolCalls',
      'temperature',
      'topP',
      'topK',
      'stop',
      'seed',
      'presencePenalty',
      'user',
      'responseFormat',
    ] as const)
      if (r[key] !== undefined) (out as unknown as Record<string, unknown>)[key] = r[key];
    if (r.effort || r.budget) out.reasoning = r.budget ? { budgetTokens: r.budget } : { effort: r.effort! };
    return out;
  });

/** Consecutive turns of one role merged (tool results first), ids by order of appearance. */
function conversationOf(request: ChatRequest, a: ApiFamily, b: ApiFamily) {
  const ids = new Map<string, string>();
  const idOf = (raw: string) => {
    if (!ids.has(raw)) ids.set(raw, `id${ids.size}`);
    return ids.get(raw)!;
  };
  const merged: { role: string; parts: unknown[] }[] = [];
  for (const message of request.messages) {
    const parts = message.parts.flatMap((p): unknown[] => {
      if (p.type === 'tool_call') return [{ t: 'call', id: idOf(p.id), name: p.name, args: JSON.parse(p.arguments) }];
      if (p.type === 'tool_result') {
        const content = p.content.filter((c) => c.type === 'text' || both(a, b, 'toolResultImages'));
        return [
          {
            t: 'result',
            id: idOf(p.callId),
            // An image's path says where it sat in one body, which differs between the two bodies compared.
            content: content.map((c) => (c.type === 'text' ? c : c.source.kind === 'url' ? { url: c.source.url } : { source: c.source })),
            error: both(a, b, 'isError') ? p.isError === true : undefined,
          },
        ];
      }
      if (p.type === 'image') return [{ t: 'image', source: p.source.kind === 'url' ? { url: p.source.url } : p.source }];
      if (p.type === 'text') return [{ t: 'text', text: p.text }];
      return [];
    });
    const last = merged.at(-1);
    if (last?.role === message.role) last.parts.push(...parts);
    else merged.push({ role: message.role, parts });
  }
  for (const turn of merged)
    turn.parts.sort((x, y) => Number((y as { t: string }).t === 'result') - Number((x as { t: string }).t === 'result'));
  return {
    system: request.system,
    messages: merged,
    tools: request.tools?.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
  };
}

function settingsOf(request: ChatRequest, a: ApiFamily, b: ApiFamily): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of ['maxTokens', 'temperature', 'topP', 'topK', 'stop', 'seed', 'presencePenalty', 'user', 'parallelToolCalls'] as const)
    if (both(a, b, field)) out[field] = request[field];
  // No tool_choice means auto in every family.
  if (both(a, b, 'toolChoice')) out.toolChoice = request.toolChoice ?? { type: 'auto' };
  if (both(a, b, 'responseFormat')) {
    const format = request.responseFormat;
    out.responseFormat = format?.type === 'json_schema' ? { type: format.type, schema: format.schema } : format;
  }
  if (both(a, b, 'budget')) out.budget = request.reasoning?.budgetTokens;
  else out.effort = effortOf(request.reasoning);
  return out;
}

/** The value at a dropped-field path (`input[3].output[1]`, `generationConfig.topK`) in a body, undefined where none is. */
function valueAt(body: Json, path: string): unknown {
  let at: unknown = body;
  for (const step of path.split(/\.|(?=\[)/)) {
    const index = /^\[(\d+)\]$/.exec(step);
    if (at === null || typeof at !== 'object') return undefined;
    at = index ? (Array.isArray(at) ? at[Number(index[1])] : undefined) : (at as Record<string, unknown>)[step];
  }
  return at;
}

const encodeDecode = (family: ApiFamily, request: ChatRequest) =>
  codecFor(family).decodeRequest(codecFor(family).encodeRequest(structuredClone(request), {}), { model: 'm', stream: false });

for (const a of API_FAMILIES)
  for (const b of API_FAMILIES) {
    if (a === b) continue;
    test(`property: a request in ${a}, translated to ${b} and back, keeps every field both can express`, () => {
      fc.assert(
        fc.property(request, (generated) => {
          // Anthropic refuses JSON output modes (they would change the answer), so they are not generated for it.
          if (a === 'anthropic-messages' || b === 'anthropic-messages') delete generated.responseFormat;
          // Images inside tool results exist only for Anthropic and Responses (chat drops them; Gemini moves them beside the result).
          if (!both(a, b, 'toolResultImages'))
            for (const message of generated.messages)
              for (const part of message.parts)
                if (part.type === 'tool_result') part.content = part.content.filter((c) => c.type === 'text');
          // The request as family `a` says it (what a client of `a` could send).
          const source = encodeDecode(a, generated);
          const there = codecFor(b).encodeRequest(structuredClone(source), {});
          const back = codecFor(a).decodeRequest(
            codecFor(a).encodeRequest(codecFor(b).decodeRequest(there, { model: 'm', stream: false }), {}),
            {
              model: 'm',
              stream: false,
            },
          );
          assert.deepEqual(conversationOf(back, a, b), conversationOf(source, a, b));
          assert.deepEqual(settingsOf(back, a, b), settingsOf(source, a, b));
        }),
        { numRuns: 60 },
      );
    });

    test(`property: every field a ${a} → ${b} translation drops is named by its path in the ${a} body the client sent`, () => {
      fc.assert(
        fc.property(request, (generated) => {
          if (a === 'anthropic-messages' || b === 'anthropic-messages') delete generated.responseFormat;
          const sent = codecFor(a).encodeRequest(structuredClone(generated), {});
          const { dropped } = translateRequest(a, b, sent, { model: 'm', stream: false });
          for (const field of dropped)
            assert.notEqual(valueAt(sent, field), undefined, `${field} names nothing in ${JSON.stringify(sent)}`);
        }),
        { numRuns: 60 },
      );
    });
  }
