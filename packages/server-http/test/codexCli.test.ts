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
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { requireCodexCli } from '@switchyard/test-support';
import { type CliRun, runCli } from './agents/agentCell.js';
import { startAgentGateway } from './agents/agentGateway.js';
import { launchCodex } from './agents/clients.js';
import { type Family, type Json, offeredTools, startScriptedUpstream, toolResultOf } from './agents/scriptedUpstream.js';

const codex = requireCodexCli();
const dir = await mkdtemp(join(tmpdir(), 'codex-cli-'));
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await rm(dir, { recursive: true, force: true });
});

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

/** The gateway in front of `upstream`: Codex's own model names routed to the family's model by aliases (the recipe of docs/coding-agents.md). */
async function startGateway(family: Family, upstreamUrl: string) {
  const started = await startAgentGateway(family, upstreamUrl, ['gpt-5-codex', 'gpt-5.5'], dir);
  cleanups.push(() => started.gateway.close());
  return started;
}

/** Runs `codex exec` in a fresh working directory, HOME and CODEX_HOME pointing at a temp dir, with no way off loopback. */
async function runCodex(gatewayUrl: string, model: string, websockets: boolean, workdir: string): Promise<CliRun> {
  const home = await mkdtemp(join(dir, 'home-'));
  // Anything that is not loopback goes to a closed port.
  const context = { gatewayUrl, proxyUrl: 'http://127.0.0.1:9', home, workdir };
  const launch = await launchCodex(context, PROMPT, { model, websockets });
  return runCli('codex', launch.args, launch.env, workdir);
}

describe(`Codex CLI ${codex.available ? codex.version : ''} through the gateway`, { skip: codex.skip }, () => {
  async function cell(family: Family, scenario: Scenario, websockets: boolean) {
    const upstream = await startScriptedUpstream(family, { ...scenario, finalText: FINAL_TEXT });
    cleanups.push(() => upstream.close());
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
