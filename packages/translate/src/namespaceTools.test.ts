import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { ApiFamily } from './apiFamily.js';
import { TranslationError } from './errors.js';
import { codecFor, translateRequest } from './families.js';
import type { Json } from './fields.js';
import type { ChatResponse, EncodeContext, StreamEvent } from './ir.js';
import { flatToolName, responsesToolsOf } from './responses/request.js';
import { SseParser } from './sseParser.js';
import { StreamTranslator } from './streamTranslator.js';

/** The upstream families a Responses client's request is translated to. */
const UPSTREAMS: readonly ApiFamily[] = ['openai-chat', 'anthropic-messages', 'gemini'];

/**
 * The shape of the tools Codex 0.171 sends on its first request (as seen on the wire:
 * function tools, one `namespace` tool grouping function tools, a hosted `web_search`), cut down.
 */
function codexRequest(): Json {
  const fn = (name: string) => ({
    type: 'function',
    name,
    description: `${name} does a thing`,
    strict: false,
    parameters: { type: 'object', properties: { target: { type: 'string' } }, required: ['target'], additionalProperties: false },
  });
  return {
    model: 'gpt-5-codex',
    stream: true,
    input: [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are a coding agent.' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'close agent a1' }] },
    ],
    tools: [
      fn('exec_command'),
      fn('write_stdin'),
      { type: 'namespace', name: 'multi_agent_v1', description: 'Tools for sub-agents.', tools: [fn('close_agent'), fn('spawn_agent')] },
      fn('update_goal'),
      { type: 'web_search', external_web_access: false },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    reasoning: { summary: 'auto' },
    store: false,
  };
}

/** The function names an upstream request body offers, in its family's shape. */
function upstreamToolNames(family: ApiFamily, body: Json): string[] {
  const tools = (body.tools ?? []) as Json[];
  if (family === 'openai-chat') return tools.map((t) => (t.function as Json).name as string);
  if (family === 'anthropic-messages') return tools.map((t) => t.name as string);
  return tools.flatMap((t) => ((t.functionDeclarations ?? []) as Json[]).map((d) => d.name as string));
}

const context = (request: Parameters<typeof responsesToolsOf>[0]): EncodeContext => {
  const namespaces = responsesToolsOf(request);
  return { model: 'gpt-5-codex', requestId: 'req_ns', now: 0, ...(namespaces ? { responsesTools: namespaces } : {}) };
};

/** A complete answer calling `name`, in the neutral model. */
const callAnswer = (name: string, args: string): ChatResponse => ({
  id: 'a1',
  model: 'm',
  parts: [
    { type: 'text', text: 'Closing it.' },
    { type: 'tool_call', id: 'call_1', name, arguments: args },
  ],
  stopReason: 'tool_use',
  usage: { input: 3, output: 2 },
});

/** An upstream stream in `family` calling `name` (written by that family's own encoder), as the client's Responses events. */
function streamedToResponses(family: ApiFamily, name: string, args: string, ctx: EncodeContext): Json[] {
  const upstream = codecFor(family).streamEncoder({ model: 'm', requestId: 'up', now: 0 });
  const events: StreamEvent[] = [
    { type: 'start', id: 'up_1', model: 'm' },
    { type: 'text', text: 'Closing it.' },
    { type: 'tool_call_start', index: 0, id: 'call_1', name },
    { type: 'tool_call_delta', index: 0, arguments: args.slice(0, 3) },
    { type: 'tool_call_delta', index: 0, arguments: args.slice(3) },
    { type: 'finish', stopReason: 'tool_use' },
    { type: 'usage', usage: { input: 3, output: 2 } },
  ];
  const sse = events.map((e) => upstream.push(e)).join('') + upstream.end();
  const translator = StreamTranslator.between(family, 'openai-responses', ctx);
  const out = translator.push(Buffer.from(sse)) + translator.finish();
  return new SseParser().push(Buffer.from(out)).map((e) => JSON.parse(e.data) as Json);
}

describe('Responses namespace tools: flattened for other families, calls mapped back', () => {
  for (const family of UPSTREAMS) {
    test(`Codex's tools to ${family}: namespace functions flattened, web_search dropped and named, plain functions kept`, () => {
      const { body, dropped } = translateRequest('openai-responses', family, codexRequest(), { model: 'm', stream: true });
      assert.deepEqual(upstreamToolNames(family, body), [
        'exec_command',
        'write_stdin',
        'multi_agent_v1__close_agent',
        'multi_agent_v1__spawn_agent',
        'update_goal',
      ]);
      assert.ok(dropped.includes('tools[4]'), `dropped: ${dropped.join(', ')}`);
    });

    test(`a call to a flattened function from ${family}, complete, goes back to the client in its namespace`, () => {
      const { request } = translateRequest('openai-responses', family, codexRequest(), { model: 'm', stream: false });
      const upstreamJson = codecFor(family).encodeResponse(callAnswer('multi_agent_v1__close_agent', '{"target":"a1"}'), {
        model: 'm',
        requestId: 'up',
        now: 0,
      });
      const answer = codecFor('openai-responses').encodeResponse(codecFor(family).decodeResponse(upstreamJson), context(request));
      const call = (answer.output as Json[]).find((item) => item.type === 'function_call');
      assert.deepEqual(
        { name: call?.name, namespace: call?.namespace, call_id: call?.call_id, arguments: JSON.parse(call?.arguments as string) },
        { name: 'close_agent', namespace: 'multi_agent_v1', call_id: 'call_1', arguments: { target: 'a1' } },
      );
    });

    test(`a call to a flattened function from ${family}, streamed, is added and done in its namespace`, () => {
      const { request } = translateRequest('openai-responses', family, codexRequest(), { model: 'm', stream: true });
      const events = streamedToResponses(family, 'multi_agent_v1__close_agent', '{"target":"a1"}', context(request));
      const added = events.find((e) => e.type === 'response.output_item.added' && (e.item as Json).type === 'function_call');
      const done = events.find((e) => e.type === 'response.output_item.done' && (e.item as Json).type === 'function_call');
      const completed = events.find((e) => e.type === 'response.completed')?.response as Json | undefined;
      for (const item of [added?.item, done?.item, (completed?.output as Json[] | undefined)?.find((i) => i.type === 'function_call')]) {
        assert.equal((item as Json | undefined)?.name, 'close_agent', JSON.stringify(events));
        assert.equal((item as Json).namespace, 'multi_agent_v1');
      }
      assert.ok(done, 'a function_call item is done');
      assert.deepEqual(JSON.parse((done.item as Json).arguments as string), { target: 'a1' });
    });

    test(`the next turn's history to ${family}: a namespaced call and its output reach the upstream under the flat name`, () => {
      const body = codexRequest();
      (body.input as Json[]).push(
        { type: 'function_call', call_id: 'call_1', namespace: 'multi_agent_v1', name: 'close_agent', arguments: '{"target":"a1"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'closed' },
      );
      const { body: upstream } = translateRequest('openai-responses', family, body, { model: 'm', stream: false });
      const text = JSON.stringify(upstream);
      assert.ok(text.includes('"multi_agent_v1__close_agent"'), text);
      assert.ok(text.includes('closed'), text);
      // Only as tool names: the history carries the flat name, never the bare one the upstream does not know.
      assert.equal(text.match(/"close_agent"/g), null, text);
    });
  }

  test('a plain function call (no namespace) passes back unchanged, with no namespace field', () => {
    const { request } = translateRequest('openai-responses', 'openai-chat', codexRequest(), { model: 'm', stream: false });
    const answer = codecFor('openai-responses').encodeResponse(callAnswer('exec_command', '{}'), context(request));
    const call = (answer.output as Json[]).find((item) => item.type === 'function_call');
    assert.equal(call?.name, 'exec_command');
    assert.equal('namespace' in (call ?? {}), false);
  });

  test('Responses → neutral → Responses keeps the namespace tool and the namespaced call as they were', () => {
    const body = codexRequest();
    (body.input as Json[]).push({
      type: 'function_call',
      call_id: 'call_1',
      namespace: 'multi_agent_v1',
      name: 'close_agent',
      arguments: '{}',
    });
    const request = codecFor('openai-responses').decodeRequest(body, { model: 'm', stream: false });
    const again = codecFor('openai-responses').encodeRequest(request);
    const ns = (again.tools as Json[]).find((t) => t.type === 'namespace');
    assert.ok(ns, 'a namespace tool is written');
    assert.deepEqual(
      { name: ns.name, description: ns.description, tools: (ns.tools as Json[]).map((t) => t.name) },
      { name: 'multi_agent_v1', description: 'Tools for sub-agents.', tools: ['close_agent', 'spawn_agent'] },
    );
    const call = (again.input as Json[]).find((i) => i.type === 'function_call');
    assert.deepEqual({ name: call?.name, namespace: call?.namespace }, { name: 'close_agent', namespace: 'multi_agent_v1' });
  });

  test('two tools that would share a flat name are refused, naming the second', () => {
    const body = codexRequest();
    (body.tools as Json[]).push({ type: 'function', name: 'multi_agent_v1__close_agent', parameters: { type: 'object' } });
    assert.throws(
      () => translateRequest('openai-responses', 'anthropic-messages', body, { model: 'm', stream: false }),
      (error: unknown) => error instanceof TranslationError && error.code === 'unsupported_translation' && error.param === 'tools[5].name',
    );
  });

  test('a hosted tool inside a namespace is refused, naming it', () => {
    const body = codexRequest();
    ((body.tools as Json[])[2]!.tools as Json[]).push({ type: 'web_search' });
    assert.throws(
      () => translateRequest('openai-responses', 'gemini', body, { model: 'm', stream: false }),
      (error: unknown) => error instanceof TranslationError && error.param === 'tools[2].tools[2].type',
    );
  });

  // Names as Codex builds them: lower-case words joined by single underscores, namespace and function alike.
  const identifier = fc.stringMatching(/^[a-z][a-z0-9]{0,7}(_[a-z0-9]{1,6}){0,2}$/);
  const args = fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean()), {
    maxKeys: 3,
  });

  test('property: for any namespaces and functions, every flat name maps back to exactly its namespace and name, complete and streamed', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(identifier, identifier), { minLength: 1, maxLength: 5, selector: ([ns, name]) => flatToolName(ns, name) }),
        fc.constantFrom(...UPSTREAMS),
        fc.nat(),
        args,
        (pairs, family, pick, argValues) => {
          const byNamespace = new Map<string, string[]>();
          for (const [ns, name] of pairs) byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), name]);
          const body: Json = {
            model: 'm',
            input: 'go',
            tools: [...byNamespace].map(([ns, names]) => ({
              type: 'namespace',
              name: ns,
              description: `${ns} tools`,
              tools: names.map((name) => ({ type: 'function', name, parameters: { type: 'object', properties: {} } })),
            })),
          };
          const { body: upstream, request } = translateRequest('openai-responses', family, body, { model: 'm', stream: true });
          const offered = upstreamToolNames(family, upstream);
          assert.equal(new Set(offered).size, pairs.length);
          const [ns, name] = pairs[pick % pairs.length]!;
          const flat = offered.find((n) => n === flatToolName(ns, name))!;
          assert.ok(flat, `${flat} offered among ${offered.join(', ')}`);
          const json = JSON.stringify(argValues);
          const complete = codecFor('openai-responses').encodeResponse(
            codecFor(family).decodeResponse(
              codecFor(family).encodeResponse(callAnswer(flat, json), { model: 'm', requestId: 'up', now: 0 }),
            ),
            context(request),
          );
          const call = (complete.output as Json[]).find((item) => item.type === 'function_call')!;
          assert.deepEqual([call.namespace, call.name], [ns, name]);
          const done = streamedToResponses(family, flat, json, context(request)).find(
            (e) => e.type === 'response.output_item.done' && (e.item as Json).type === 'function_call',
          )!.item as Json;
          assert.deepEqual([done.namespace, done.name], [ns, name]);
          assert.deepEqual(JSON.parse(done.arguments as string), JSON.parse(json));
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('hosted tools: translation.hosted_tools drop | refuse', () => {
  const cases: { from: ApiFamily; to: ApiFamily; body: Json; dropped: string; refused: string }[] = [
    {
      from: 'openai-responses',
      to: 'anthropic-messages',
      body: {
        model: 'm',
        input: 'hi',
        tools: [
          { type: 'function', name: 'f' },
          { type: 'file_search', vector_store_ids: ['vs'] },
        ],
      },
      dropped: 'tools[1]',
      refused: 'tools[1].type',
    },
    {
      from: 'anthropic-messages',
      to: 'openai-chat',
      body: {
        model: 'm',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
        tools: [
          { type: 'web_search_20250305', name: 'web_search', max_uses: 2 },
          { name: 'f', input_schema: { type: 'object' } },
        ],
      },
      dropped: 'tools[0]',
      refused: 'tools[0].type',
    },
    {
      from: 'gemini',
      to: 'anthropic-messages',
      body: {
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
        tools: [{ functionDeclarations: [{ name: 'f' }] }, { googleSearch: {} }],
      },
      dropped: 'tools[1].googleSearch',
      refused: 'tools[1]',
    },
  ];
  for (const c of cases) {
    test(`${c.from} → ${c.to}: drop (the default) leaves the hosted tool out, names ${c.dropped}, keeps the function`, () => {
      for (const hostedTools of [undefined, 'drop'] as const) {
        const { body, dropped } = translateRequest(c.from, c.to, c.body, {
          model: 'm',
          stream: false,
          ...(hostedTools ? { hostedTools } : {}),
        });
        assert.deepEqual(dropped, [c.dropped]);
        assert.deepEqual(upstreamToolNames(c.to, body), ['f']);
      }
    });
    test(`${c.from} → ${c.to}: refuse answers unsupported_translation at ${c.refused}`, () => {
      assert.throws(
        () => translateRequest(c.from, c.to, c.body, { model: 'm', stream: false, hostedTools: 'refuse' }),
        (error: unknown) => error instanceof TranslationError && error.code === 'unsupported_translation' && error.param === c.refused,
      );
    });
  }

  test('a tool_choice forcing a hosted tool that was left out is refused, drop or not: the answer asked for cannot be given', () => {
    const anthropic = {
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
      tool_choice: { type: 'tool', name: 'web_search' },
    };
    const responses = { model: 'm', input: 'hi', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } };
    for (const [from, body, param] of [
      ['anthropic-messages', anthropic, 'tool_choice.name'],
      ['openai-responses', responses, 'tool_choice.type'],
    ] as const)
      assert.throws(
        () => translateRequest(from, 'gemini', body, { model: 'm', stream: false }),
        (error: unknown) => error instanceof TranslationError && error.code === 'unsupported_translation' && error.param === param,
      );
  });

  test('a request whose only tool is hosted sends no tool list at all (an empty one is refused by some upstreams)', () => {
    const { body, dropped } = translateRequest(
      'openai-responses',
      'openai-chat',
      { model: 'm', input: 'hi', tools: [{ type: 'web_search' }] },
      { model: 'm', stream: false },
    );
    assert.equal(body.tools, undefined);
    assert.deepEqual(dropped, ['tools[0]']);
  });

  test('a client-run built-in tool (local_shell, apply_patch) is refused whatever the setting: the model would call it in a shape no other family has', () => {
    for (const type of ['local_shell', 'apply_patch']) {
      assert.throws(
        () =>
          translateRequest(
            'openai-responses',
            'openai-chat',
            { model: 'm', input: 'hi', tools: [{ type, name: 'x' }] },
            { model: 'm', stream: false },
          ),
        (error: unknown) => error instanceof TranslationError && error.param === 'tools[0].type',
      );
    }
  });
});

describe('Responses custom (free-form) tools: a function taking {"input"} for other families, calls mapped back', () => {
  const GRAMMAR = 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF';
  const PATCH = '*** Begin Patch\n*** Add File: a.txt\n+hello "world"\n*** End Patch';
  /** The shape Codex 0.171 sends for its default model: `apply_patch` as a custom tool with a lark grammar. */
  function codexCustomRequest(): Json {
    return {
      model: 'gpt-5.5',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'add a.txt' }] }],
      tools: [
        { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
        {
          type: 'custom',
          name: 'apply_patch',
          description: 'Use the `apply_patch` tool to edit files.',
          format: { type: 'grammar', syntax: 'lark', definition: GRAMMAR },
        },
        { type: 'tool_search' },
        { type: 'web_search' },
      ],
      text: { verbosity: 'low' },
    };
  }

  for (const family of UPSTREAMS) {
    test(`to ${family}: apply_patch becomes a function of one string, told the grammar; the grammar is named as dropped`, () => {
      const { body, dropped } = translateRequest('openai-responses', family, codexCustomRequest(), { model: 'm', stream: false });
      assert.deepEqual(upstreamToolNames(family, body), ['exec_command', 'apply_patch']);
      const text = JSON.stringify(body.tools);
      assert.ok(text.includes('begin_patch hunk+'), text);
      assert.deepEqual(dropped, ['tools[1].format', 'tools[2]', 'tools[3]']);
    });

    test(`from ${family}: a call of apply_patch comes back as a custom_tool_call with the text, complete and streamed`, () => {
      const { request } = translateRequest('openai-responses', family, codexCustomRequest(), { model: 'm', stream: true });
      const args = JSON.stringify({ input: PATCH });
      const upstreamJson = codecFor(family).encodeResponse(callAnswer('apply_patch', args), { model: 'm', requestId: 'up', now: 0 });
      const complete = codecFor('openai-responses').encodeResponse(codecFor(family).decodeResponse(upstreamJson), context(request));
      const item = (complete.output as Json[]).find((i) => i.type !== 'message');
      assert.deepEqual(
        { type: item?.type, name: item?.name, input: item?.input, call_id: item?.call_id },
        { type: 'custom_tool_call', name: 'apply_patch', input: PATCH, call_id: 'call_1' },
      );
      const events = streamedToResponses(family, 'apply_patch', args, context(request));
      const added = events.find((e) => e.type === 'response.output_item.added' && (e.item as Json).type !== 'message');
      assert.equal((added?.item as Json | undefined)?.type, 'custom_tool_call', JSON.stringify(events));
      assert.ok(!events.some((e) => e.type === 'response.function_call_arguments.delta'));
      const inputDone = events.find((e) => e.type === 'response.custom_tool_call_input.done');
      assert.equal(inputDone?.input, PATCH);
      const done = events.find((e) => e.type === 'response.output_item.done' && (e.item as Json).type === 'custom_tool_call');
      assert.deepEqual([(done?.item as Json | undefined)?.name, (done?.item as Json | undefined)?.input], ['apply_patch', PATCH]);
    });

    test(`to ${family}: a custom_tool_call and its output in the history reach the upstream as a call with {"input"} and its result`, () => {
      const body = codexCustomRequest();
      (body.input as Json[]).push(
        { type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: PATCH },
        { type: 'custom_tool_call_output', call_id: 'call_p', output: 'Success. Updated a.txt' },
      );
      const { body: upstream } = translateRequest('openai-responses', family, body, { model: 'm', stream: false });
      const text = JSON.stringify(upstream);
      assert.ok(text.includes('Success. Updated a.txt'), text);
      // Read back in the upstream's own family: the call carries the patch as its one argument, "input".
      const sent = codecFor(family).decodeRequest(upstream, { model: 'm', stream: false });
      const call = sent.messages.flatMap((m) => m.parts).find((p) => p.type === 'tool_call');
      assert.deepEqual(call?.type === 'tool_call' ? [call.name, JSON.parse(call.arguments)] : [], ['apply_patch', { input: PATCH }]);
    });
  }

  test('Responses → neutral → Responses keeps the custom tool, its grammar, and custom calls and outputs', () => {
    const body = codexCustomRequest();
    (body.input as Json[]).push(
      { type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: PATCH },
      { type: 'custom_tool_call_output', call_id: 'call_p', output: 'ok' },
    );
    const request = codecFor('openai-responses').decodeRequest(body, { model: 'm', stream: false });
    const again = codecFor('openai-responses').encodeRequest(request);
    const tool = (again.tools as Json[]).find((t) => t.name === 'apply_patch');
    assert.deepEqual(tool, (codexCustomRequest().tools as Json[])[1]);
    const items = (again.input as Json[]).filter((i) => String(i.type).startsWith('custom_tool_call'));
    assert.deepEqual(items, [
      { type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: PATCH },
      { type: 'custom_tool_call_output', call_id: 'call_p', output: 'ok' },
    ]);
  });

  test('property: any free-form text survives the function form both ways, complete and streamed', () => {
    fc.assert(
      fc.property(fc.constantFrom(...UPSTREAMS), fc.string({ maxLength: 200 }), (family, input) => {
        const { request } = translateRequest('openai-responses', family, codexCustomRequest(), { model: 'm', stream: true });
        const args = JSON.stringify({ input });
        const complete = codecFor('openai-responses').encodeResponse(
          codecFor(family).decodeResponse(
            codecFor(family).encodeResponse(callAnswer('apply_patch', args), { model: 'm', requestId: 'up', now: 0 }),
          ),
          context(request),
        );
        assert.equal((complete.output as Json[]).find((i) => i.type === 'custom_tool_call')?.input, input);
        const done = streamedToResponses(family, 'apply_patch', args, context(request)).find(
          (e) => e.type === 'response.custom_tool_call_input.done',
        );
        assert.equal(done?.input, input);
      }),
      { numRuns: 100 },
    );
  });
});
