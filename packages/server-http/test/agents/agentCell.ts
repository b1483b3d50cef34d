/**
 * One cell of the coding-agent matrix: a real CLI, headless, through the
 * gateway, against a scripted upstream of one family. The model thinks,
 * asks the CLI to run one of its own tools (a shell command that writes
 * proof.txt and prints it), and answers with text once the result is back.
 * The cell passes when the CLI exits 0, proof.txt is on disk, the tool's
 * output reached the upstream, and the final text is printed; each turn
 * went upstream as a stream.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type AgentCliName, requireAgentCli } from '@switchyard/test-support';
import { type AgentGateway, startAgentGateway } from './agentGateway.js';
import { type AgentClient, proofText } from './clients.js';
import { startRefusingProxy } from './refusingProxy.js';
import { type Family, type ScriptedUpstream, startScriptedUpstream, streams, toolResultOf } from './scriptedUpstream.js';

export const PROMPT = 'Write proof.txt with a shell command.';
export const FINAL_TEXT = 'Done: proof.txt is written.';
/** How long a CLI may take before it is killed (a hang is a failure, never a wait). */
const RUN_LIMIT_MS = 120_000;

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI `name` with `args` (its environment entirely from `env`), killed after RUN_LIMIT_MS. */
export async function runCli(name: AgentCliName, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<CliRun> {
  const cli = requireAgentCli(name);
  if (!cli.available) throw new Error(cli.skip);
  const [command, ...prefix] = cli.command;
  const child = spawn(command!, [...prefix, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_LIMIT_MS);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

export interface CellResult {
  run: CliRun;
  upstream: ScriptedUpstream;
  /** The CLI's working directory, where proof.txt lands. */
  workdir: string;
  /** The requests the gateway answered. */
  served: AgentGateway['served'];
  /** Hosts the CLI tried to reach off loopback (refused). */
  offLoopback: string[];
  transcript: string;
}

/**
 * Starts the scripted upstream, the gateway and the refusing proxy, runs the CLI once with
 * `launchPrompt`, and registers the cleanup with `cleanups`.
 */
export async function runAgentTurn(
  client: AgentClient,
  family: Family,
  scratch: string,
  cleanups: (() => Promise<void>)[],
  launchPrompt = PROMPT,
): Promise<CellResult> {
  const upstream = await startScriptedUpstream(family, { tool: client.tool, args: client.args, finalText: FINAL_TEXT, reasoning: true });
  cleanups.push(() => upstream.close());
  const { gateway, served } = await startAgentGateway(family, upstream.url, client.models, scratch);
  cleanups.push(() => gateway.close());
  const proxy = await startRefusingProxy();
  cleanups.push(() => proxy.close());
  const home = await mkdtemp(join(scratch, `${client.cli}-home-`));
  const workdir = await mkdtemp(join(scratch, `${client.cli}-work-`));
  const launch = await client.launch({ gatewayUrl: gateway.url, proxyUrl: proxy.url, home, workdir }, launchPrompt);
  const run = await runCli(client.cli, launch.args, launch.env, workdir);
  const requests = upstream.requests.map((r) => `${r.atMs} ms ${r.path}`).join('\n');
  const transcript = [
    `exit ${run.code}`,
    `--- stdout\n${run.stdout}`,
    `--- stderr\n${run.stderr}`,
    `--- upstream requests\n${requests}`,
    `--- refused off-loopback\n${proxy.attempts.join('\n')}`,
  ].join('\n');
  return { run, upstream, workdir, served, offLoopback: proxy.attempts, transcript };
}

/** Runs one cell and asserts the four conditions it passes on. */
export async function assertAgentCell(
  client: AgentClient,
  family: Family,
  scratch: string,
  cleanups: (() => Promise<void>)[],
): Promise<CellResult> {
  const result = await runAgentTurn(client, family, scratch, cleanups);
  const { run, upstream, workdir, transcript } = result;
  assert.equal(run.code, 0, transcript);
  assert.equal((await readFile(join(workdir, 'proof.txt'), 'utf8')).trim(), proofText(client.cli), transcript);
  const turns = upstream.turns();
  assert.ok(turns.length >= 2, `expected a tool call turn and a result turn\n${transcript}`);
  assert.equal(toolResultOf(family, turns[0]!.body), undefined, transcript);
  assert.match(toolResultOf(family, turns.at(-1)!.body) ?? '', new RegExp(proofText(client.cli)), transcript);
  // Every CLI streams its turns; the gateway streams them upstream in the family's way.
  for (const turn of turns) assert.ok(streams(family, turn.path, turn.body), `${turn.path} was not streamed\n${transcript}`);
  assert.ok(run.stdout.includes(FINAL_TEXT), transcript);
  return result;
}
