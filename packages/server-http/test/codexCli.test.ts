/**
 * The real Codex CLI (`@openai/codex`, pinned as a devDependency of
 * test-support) through the gateway: `codex exec` speaks OpenAI Responses,
 * over the `/v1/responses` websocket or over HTTPS, and each run's upstream
 * is a scripted OpenAI chat, OpenAI Responses, Anthropic or Gemini server
 * on loopback. One turn: the model asks Codex to write a file (with a shell
 * command, or with `apply_patch`, the free-form tool Codex sends for its own
 * models), then answers with text once the tool's output comes back.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { requireCodexCli } from '@switchyard/test-support';
import { parseConfig } from '../src/gateway/config/load.js';
import { Gateway } from '../src/gateway/gateway.js';

const codex = requireCodexCli();
const dir = await mkdtemp(join(tmpdir(), 'codex-cli-'));
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await rm(dir, { recursive: true, force: true });
});

type Family = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';
type Json = Record<string, unknown>;

/**
 * What the scripted model asks Codex to do. `exec`: run a shell command (Codex's `exec_command`
 * function). `patch`: add a file with `apply_patch`, the free-form (`custom`) tool Codex sends
 * for the models it has metadata for; other families see a function taking `{"input"}`.
 */
interface Scenario {
  /** The model name Codex is configured with. */
  codexModel: string;
  tool: string;
  args: Json;
  /** What the tool's output, sent back upstream, shows. */
  result: RegExp;
}
const COMMAND = 'echo codex-was-here > proof.txt && cat proof.txt';
const EXEC: Scenario = { codexModel: 'gpt-5-codex', tool: 'exec_command', args: { cmd: COMMAND }, result: /codex-was-here/ };
const PATCH: Scenario = {
  codexModel: 'gpt-5.5',
  tool: 'apply_patch',
  args: { input: '*** Begin Patch\n*** Add File: proof.txt\n+codex-was-here\n*** End Patch\n' },
  result: /proof\.txt/,
};
const PROMPT = 'Write proof.txt with a shell command.';
const FINAL_TEXT = 'Done: proof.txt now says codex-was-here.';

/** Whether the upstream request carries the result of a tool call (the second turn of the exchange). */
function toolResultOf(family: Family, body: Json): string | undefined {
  if (family === 'openai-chat') {
    const message = (body.messages as Json[]).find((m) => m.role === 'tool');
    return message === undefined ? undefined : JSON.stringify(message.content);
  }
  if (family === 'openai-responses') {
    const item = (body.input as Json[]).find((i) => i.type === 'function_call_output');
    return item === undefined ? undefined : JSON.stringify(item.output);
  }
  if (family === 'anthropic') {
    for (const m of body.messages as Json[])
      for (const block of Array.isArray(m.content) ? (m.content as Json[]) : [])
        if (block.type === 'tool_result') return JSON.stringify(block.content);
    return undefined;
  }
  for (const c of body.contents as Json[])
    for (const part of (c.parts ?? []) as Json[]) if (part.functionResponse) return JSON.stringify(part.functionResponse);
  return undefined;
}

/** The names of the functions the upstream request offers. */
function offeredTools(family: Family, body: Json): string[] {
  const tools = (body.tools ?? []) as Json[];
  if (family === 'openai-chat') return tools.map((t) => (t.function as Json).name as string);
  if (family === 'anthropic') return tools.map((t) => t.name as string);
  if (family === 'openai-responses')
    return tools.flatMap((t) =>
      t.type === 'namespace'
        ? ((t.tools ?? []) as Json[]).map((f) => `${t.name}.${f.name}`)
        : t.type === 'function'
          ? [t.name as string]
          : [],
    );
  return tools.flatMap((t) => ((t.functionDeclarations ?? []) as Json[]).map((d) => d.name as string));
}

const sse = (data: unknown, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

/** A streamed answer in the family's own shape: a call to `exec_command`, or the final text. */
function answer(family: Family, model: string, scenario: Scenario, call: boolean): string[] {
  const args = JSON.stringify(scenario.args);
  const TOOL = scenario.tool;
  if (family === 'openai-chat') {
    const chunk = (delta: Json, finish: string | null = null, usage?: Json) =>
      sse({
        id: 'chatcmpl-s',
        object: 'chat.completion.chunk',
        created: 1,
        model,
        choices: [{ index: 0, delta, finish_reason: finish }],
        ...(usage ? { usage } : {}),
      });
    const body = call
      ? [
          chunk({ role: 'assistant', content: null }),
          chunk({ tool_calls: [{ index: 0, id: 'call_s1', type: 'function', function: { name: TOOL, arguments: '' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, 9) } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(9) } }] }),
          chunk({}, 'tool_calls'),
        ]
      : [
          chunk({ role: 'assistant', content: '' }),
          chunk({ content: FINAL_TEXT.slice(0, 6) }),
          chunk({ content: FINAL_TEXT.slice(6) }),
          chunk({}, 'stop'),
        ];
    return [
      ...body,
      sse({
        id: 'chatcmpl-s',
        object: 'chat.completion.chunk',
        created: 1,
        model,
        choices: [],
        usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
      }),
      'data: [DONE]\n\n',
    ];
  }
  if (family === 'openai-responses') {
    const envelope = (status: string, output: Json[]) => ({
      id: 'resp_s',
      object: 'response',
      created_at: 1,
      status,
      model,
      output,
      usage: null,
    });
    const item = call
      ? { id: 'fc_s1', type: 'function_call', status: 'completed', call_id: 'call_s1', name: TOOL, arguments: args }
      : {
          id: 'msg_s1',
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: FINAL_TEXT, annotations: [] }],
        };
    const added = call ? { ...item, status: 'in_progress', arguments: '' } : { ...item, status: 'in_progress', content: [] };
    const delta = call
      ? sse(
          { type: 'response.function_call_arguments.delta', item_id: item.id, output_index: 0, delta: args, sequence_number: 3 },
          'response.function_call_arguments.delta',
        )
      : sse(
          {
            type: 'response.output_text.delta',
            item_id: item.id,
            output_index: 0,
            content_index: 0,
            delta: FINAL_TEXT,
            sequence_number: 3,
          },
          'response.output_text.delta',
        );
    return [
      sse({ type: 'response.created', response: envelope('in_progress', []), sequence_number: 0 }, 'response.created'),
      sse({ type: 'response.output_item.added', output_index: 0, item: added, sequence_number: 1 }, 'response.output_item.added'),
      delta,
      sse({ type: 'response.output_item.done', output_index: 0, item, sequence_number: 4 }, 'response.output_item.done'),
      sse(
        {
          type: 'response.completed',
          response: { ...envelope('completed', [item]), usage: { input_tokens: 20, output_tokens: 5, total_tokens: 25 } },
          sequence_number: 5,
        },
        'response.completed',
      ),
    ];
  }
  if (family === 'anthropic') {
    const start = sse(
      {
        type: 'message_start',
        message: {
          id: 'msg_s',
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 20, output_tokens: 1 },
        },
      },
      'message_start',
    );
    const block = call
      ? [
          sse(
            { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_s1', name: TOOL, input: {} } },
            'content_block_start',
          ),
          sse(
            { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: args.slice(0, 9) } },
            'content_block_delta',
          ),
          sse(
            { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: args.slice(9) } },
            'content_block_delta',
          ),
        ]
      : [
          sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
          sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: FINAL_TEXT } }, 'content_block_delta'),
        ];
    return [
      start,
      ...block,
      sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
      sse(
        { type: 'message_delta', delta: { stop_reason: call ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } },
        'message_delta',
      ),
      sse({ type: 'message_stop' }, 'message_stop'),
    ];
  }
  const part = call ? { functionCall: { name: TOOL, args: scenario.args } } : { text: FINAL_TEXT };
  return [
    sse({
      candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 5, totalTokenCount: 25 },
      modelVersion: model,
    }),
  ];
}

/** A scripted upstream of one family on loopback: it records each request and answers by the turn it is in. */
async function startScriptedUpstream(family: Family, scenario: Scenario) {
  const requests: Json[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Json;
      requests.push({ path: req.url, body });
      const model = family === 'gemini' ? ((req.url ?? '').split('/models/')[1]?.split(':')[0] ?? 'm') : String(body.model);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of answer(family, model, scenario, toolResultOf(family, body) === undefined)) res.write(event);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url, requests };
}

/** The gateway in front of `upstream`: Codex's own model name routed to the family's model by an alias (the recipe of docs/coding-agents.md). */
async function startGateway(family: Family, upstreamUrl: string) {
  const [kind, path, upstreamModel] = {
    'openai-chat': ['openai-compatible', 'v1', 'local-coder'],
    'openai-responses': ['openai-responses', 'v1', 'gpt-5.1-codex'],
    anthropic: ['anthropic', 'v1', 'claude-sonnet-4-5'],
    gemini: ['gemini', 'v1beta', 'gemini-2.5-flash'],
  }[family];
  const provider = `kind: ${kind}\n    base_url: ${upstreamUrl}/${path}\n    aliases: { gpt-5-codex: ${upstreamModel}, gpt-5.5: ${upstreamModel} }`;
  const yaml = `
port: 0
auth-dir: ${await mkdtemp(join(dir, 'auths-'))}
api-keys: [sk-codex-test]
metrics: { enabled: false }
server: { operations: { cache: { enabled: false } } }
providers:
  upstream:
    ${provider}
    health_check: { enabled: false }
`;
  const gateway = await Gateway.start({ config: parseConfig(yaml), logDestination: { write() {} } });
  cleanups.push(() => gateway.close());
  if (family !== 'openai-chat')
    await gateway.credentials.manager.add({ id: 'k', provider: 'upstream', type: 'api_key', token: 'upstream-key' });
  const ws = { opened: 0, creates: 0 };
  gateway.websocket.events.on('websocket:open', () => ws.opened++);
  gateway.websocket.events.on('websocket:message', (m) => {
    if (m.direction === 'in' && m.type === 'response.create') ws.creates++;
  });
  return { gateway, ws };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `codex exec` in a fresh working directory, HOME and CODEX_HOME pointing at a temp dir, with no way off loopback. */
async function runCodex(gatewayUrl: string, model: string, websockets: boolean, workdir: string): Promise<Run> {
  if (!codex.available) throw new Error(codex.skip);
  const home = await mkdtemp(join(dir, 'home-'));
  await writeFile(
    join(home, 'config.toml'),
    `model = "${model}"
model_provider = "switchyard"
check_for_update_on_startup = false

[model_providers.switchyard]
name = "Switchyard"
base_url = "${gatewayUrl}/v1"
env_key = "SWITCHYARD_API_KEY"
wire_api = "responses"
supports_websockets = ${websockets}
request_max_retries = 0
stream_max_retries = 0
`,
  );
  const [node, launcher] = codex.command;
  const child = spawn(node, [launcher, 'exec', '--skip-git-repo-check', '--sandbox', 'danger-full-access', '--color', 'never', PROMPT], {
    cwd: workdir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      CODEX_HOME: home,
      SWITCHYARD_API_KEY: 'sk-codex-test',
      // Anything that is not loopback goes to a closed port.
      HTTP_PROXY: 'http://127.0.0.1:9',
      HTTPS_PROXY: 'http://127.0.0.1:9',
      ALL_PROXY: 'http://127.0.0.1:9',
      NO_PROXY: '127.0.0.1,localhost',
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

describe(`Codex CLI ${codex.available ? codex.version : ''} through the gateway`, { skip: codex.skip }, () => {
  async function cell(family: Family, scenario: Scenario, websockets: boolean) {
    const upstream = await startScriptedUpstream(family, scenario);
    const { gateway, ws } = await startGateway(family, upstream.url);
    const workdir = await mkdtemp(join(dir, 'work-'));
    const run = await runCodex(gateway.url, scenario.codexModel, websockets, workdir);
    const transcript = `exit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;
    assert.equal(run.code, 0, transcript);
    assert.equal((await readFile(join(workdir, 'proof.txt'), 'utf8')).trim(), 'codex-was-here', transcript);
    assert.equal(upstream.requests.length, 2, transcript);
    const [first, second] = upstream.requests.map((r) => r.body as Json);
    assert.ok(offeredTools(family, first!).includes(scenario.tool), offeredTools(family, first!).join(', '));
    if (family === 'openai-responses') {
      // The same family: passed through untouched, namespace and hosted tool included.
      assert.ok(offeredTools(family, first!).includes('multi_agent_v1.close_agent'), offeredTools(family, first!).join(', '));
      assert.ok(JSON.stringify(first!.tools).includes('"web_search"'));
    } else {
      // Codex's hosted web_search did not reach the upstream; with its fallback metadata, Codex's namespace tool went flattened.
      assert.ok(!JSON.stringify(first!.tools).includes('web_search'));
      if (scenario === EXEC)
        assert.ok(offeredTools(family, first!).includes('multi_agent_v1__close_agent'), offeredTools(family, first!).join(', '));
    }
    assert.match(toolResultOf(family, second!) ?? '', scenario.result, transcript);
    // The second turn carries the whole conversation once: over the websocket Codex sent only the new items.
    assert.equal(JSON.stringify(second).split(PROMPT).length - 1, 1, JSON.stringify(second));
    assert.ok(run.stdout.includes(FINAL_TEXT), transcript);
    if (websockets) {
      assert.equal(ws.opened, 1, transcript);
      // Codex's warm-up (`generate: false`, answered by the gateway itself), then both turns, the second chained on the first.
      assert.equal(ws.creates, 3, transcript);
    } else assert.equal(ws.opened, 0);
  }

  for (const family of ['openai-chat', 'openai-responses', 'anthropic', 'gemini'] as const) {
    for (const websockets of [true, false]) {
      const transport = websockets ? 'the /v1/responses websocket' : 'HTTPS (POST /v1/responses)';
      test(`${family} upstream, over ${transport}: runs the command, the output goes upstream, the final text is printed`, () =>
        cell(family, EXEC, websockets));
    }
  }

  for (const family of ['openai-chat', 'anthropic', 'gemini'] as const) {
    test(`${family} upstream, Codex's own model (gpt-5.5): its free-form apply_patch tool adds the file`, () => cell(family, PATCH, true));
  }
});
