/**
 * A real ACP agent from npm behind the session server: Gemini CLI (pinned in test-support),
 * started with `--acp` and pointed at the project's gateway, which relays to a scripted Gemini
 * upstream on loopback. The scripted model asks for one `write_file` call, then answers with
 * text once the tool's result comes back. The test checks that the agent's tool call and its
 * permission request reach `/events`, that the permission is answered through `POST /dialog`,
 * and that the file is written only after the approval.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Gateway, parseConfig } from '@switchyard/server-http';
import { openEvents, requireAgentCli } from '@switchyard/test-support';
import { type AgentSessionServer, startAgentSessionServer } from '../agentSessionServer.js';

const gemini = requireAgentCli('gemini');
const CLIENT_KEY = 'sk-acp-test';
const MODEL = 'gemini-2.5-flash';
const PROOF = 'acp-was-here';
const FINAL_TEXT = 'Wrote proof.txt.';

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

type Json = Record<string, unknown>;

/** Whether a Gemini request carries a function's result (the turn after the tool ran). */
function hasFunctionResponse(body: Json): boolean {
  const contents = (body.contents ?? []) as { parts?: Json[] }[];
  return contents.some((content) => (content.parts ?? []).some((part) => part.functionResponse !== undefined));
}

/** The names of the functions a Gemini request offers. */
function offeredFunctions(body: Json): string[] {
  const tools = (body.tools ?? []) as { functionDeclarations?: { name: string }[] }[];
  return tools.flatMap((tool) => (tool.functionDeclarations ?? []).map((declaration) => declaration.name));
}

const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
const response = (model: string, parts: Json[]) => ({
  candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
  usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
  modelVersion: model,
});

/**
 * The scripted Gemini API: a request offering `write_file` and carrying no function result gets
 * the call; any other gets text (the final answer, or Gemini CLI's side requests).
 */
async function startScriptedGemini(proofPath: string) {
  const requests: { path: string; body: Json }[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Json;
      const path = req.url ?? '';
      requests.push({ path, body });
      const model = path.split('/models/')[1]?.split(':')[0] ?? MODEL;
      if (path.includes(':countTokens')) return res.writeHead(200, { 'content-type': 'application/json' }).end('{"totalTokens":10}');
      const wantsTool = offeredFunctions(body).includes('write_file') && !hasFunctionResponse(body);
      const parts = wantsTool
        ? [{ functionCall: { name: 'write_file', args: { file_path: proofPath, content: `${PROOF}\n` } } }]
        : [{ text: FINAL_TEXT }];
      if (path.includes(':streamGenerateContent')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(sse(response(model, parts)));
      } else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response(model, parts)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

async function startGatewayTo(upstreamUrl: string, dir: string) {
  const yaml = `
port: 0
auth-dir: ${join(dir, 'auths')}
api-keys: [${CLIENT_KEY}]
metrics: { enabled: false }
server: { operations: { cache: { enabled: false } } }
providers:
  upstream:
    kind: gemini
    base_url: ${upstreamUrl}/v1beta
    models: [${MODEL}, gemini-2.5-flash-lite, gemini-2.5-pro]
    health_check: { enabled: false }
`;
  const gateway = await Gateway.start({ config: parseConfig(yaml), logDestination: { write() {} } });
  cleanups.push(() => gateway.close());
  await gateway.credentials.manager.add({ id: 'k', provider: 'upstream', type: 'api_key', token: 'upstream-key' });
  return gateway;
}

test(`Gemini CLI ${gemini.available ? gemini.version : ''} over ACP: its tool call and permission request reach /events, POST /dialog approves, then the file is written`, {
  skip: gemini.skip,
  timeout: 300_000,
}, async () => {
  if (!gemini.available) return;
  const dir = await mkdtemp(join(tmpdir(), 'acp-gemini-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const home = join(dir, 'home');
  const work = join(dir, 'work');
  await mkdir(join(home, '.gemini'), { recursive: true });
  await mkdir(work);
  // No telemetry, usage statistics or update checks: the only traffic is to the gateway on loopback.
  await writeFile(
    join(home, '.gemini', 'settings.json'),
    JSON.stringify({
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      security: { auth: { selectedType: 'gateway' } },
    }),
  );
  const proofPath = join(work, 'proof.txt');
  const upstream = await startScriptedGemini(proofPath);
  const gateway = await startGatewayTo(upstream.url, dir);
  const [command, ...launcher] = gemini.command;
  const stderr: string[] = [];
  const server: AgentSessionServer = await startAgentSessionServer({
    transport: 'acp',
    command: command!,
    args: [...launcher, '--acp', '--model', MODEL],
    cwd: work,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      GOOGLE_GEMINI_BASE_URL: gateway.url,
      GEMINI_API_KEY: CLIENT_KEY,
      // Anything that tried to leave the machine would meet a proxy that is not there.
      HTTPS_PROXY: 'http://127.0.0.1:9',
      HTTP_PROXY: 'http://127.0.0.1:9',
      NO_PROXY: '127.0.0.1,localhost',
      NO_COLOR: '1',
    },
    port: 0,
    acpPermissions: 'ask',
    // Gemini CLI is a large program: on a loaded machine its start-up alone has taken over the default 30 s.
    acpHandshakeTimeoutMs: 120_000,
    onStderr: (text: string) => stderr.push(text),
  });
  cleanups.push(() => server.close());
  try {
    const events = await openEvents(`${server.url}/events`);
    await events.waitFor((e) => e.event === 'status_change' && e.data.status === 'stable', 'the ACP session', 60_000);
    const post = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal((await post('/message', { content: 'Write proof.txt.', type: 'user' })).status, 200);
    const request = await events.waitFor(
      (e) => e.event === 'permission' && e.data.outcome === 'requested',
      'the permission request',
      90_000,
    );
    const toolCall = events.events.find((e) => e.event === 'tool_call' && e.data.id === request.data.tool_call_id);
    assert.ok(toolCall, 'the tool call the permission is for came on /events');
    assert.equal(toolCall.data.kind, 'edit');
    assert.equal(existsSync(proofPath), false, 'nothing is written before the approval');
    const status = (await (await fetch(`${server.url}/status`)).json()) as { status: string; dialog?: { options: string[] } };
    assert.equal(status.status, 'running');
    const options = status.dialog?.options ?? [];
    // Once, not for the session: Gemini CLI refuses the wider grants in a folder it does not trust.
    const allowOnce = options.findIndex((option) => /^(allow|yes|proceed)\b/i.test(option) && !/always|session/i.test(option));
    assert.ok(allowOnce >= 0, `an allow option among ${JSON.stringify(options)}`);
    assert.equal((await post('/dialog', { option: allowOnce + 1 })).status, 200);
    await events.waitFor((e) => e.event === 'permission' && e.data.outcome === 'answered', 'the answer');
    await events.waitFor(
      (e) => e.event === 'tool_call' && e.data.id === request.data.tool_call_id && e.data.status === 'completed',
      'the tool call completed',
      60_000,
    );
    assert.equal(await readFile(proofPath, 'utf8'), `${PROOF}\n`);
    await events.waitFor(
      (e) => e.event === 'message_update' && e.data.role === 'agent' && String(e.data.content).includes(FINAL_TEXT),
      'the reply',
      60_000,
    );
    assert.ok(
      upstream.requests.some((r) => hasFunctionResponse(r.body)),
      'the tool result went back upstream through the gateway',
    );
    events.close();
  } catch (error) {
    throw new Error(
      `${(error as Error).message}\nagent stderr:\n${stderr.join('').slice(-3000)}\nupstream: ${upstream.requests.map((r) => r.path).join(', ')}`,
      { cause: error },
    );
  }
});
