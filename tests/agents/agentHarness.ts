/**
 * @module agentHarness
 * One real coding-agent CLI in a PTY behind the agent session server, its
 * model the scripted one behind the gateway: everything on loopback, HOME
 * and XDG in a temporary directory. Tests talk to the agent session server
 * over HTTP as a client would, and wait for conditions, never for time.
 */
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AgentSessionServer, startAgentSessionServer } from '@switchyard/agent-session';
import type { Gateway } from '@switchyard/server-http';
import { type AgentCliName, requireAgentCli } from '@switchyard/test-support';
import { CLI_SETUPS, commonEnv } from './cliSetups.js';
import { killGroup, killProgramsUnder } from './leftovers.js';
import { startScriptedGateway } from './scriptedGateway.js';
import { type ModelAnswer, type ModelRequest, type ScriptedModel, startScriptedModel } from './scriptedModel.js';

type Json = Record<string, unknown>;

/** The quiet-screen window the agents run with (the server's default). */
export const STABLE_WINDOW_MS = 2000;

/** A running CLI behind the agent session server. */
export interface RunningAgent {
  server: AgentSessionServer;
  model: ScriptedModel;
  gateway: Gateway;
  workdir: string;
  /** The CLI's version (from its package). */
  version: string;
  /** What the CLI wrote to stderr (ACP only: on a PTY it is part of the screen). */
  stderr: string[];
  /** Stops the agent (and its whole process group), the gateway and the model; removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Whether the CLI trusts its working directory from the start (default true). */
  trusted?: boolean;
  /** The model's answers (default: {@link defaultScript}). */
  script?: (request: ModelRequest) => ModelAnswer;
  cols?: number;
  rows?: number;
  /** The quiet-screen window (default {@link STABLE_WINDOW_MS}). */
  stableWindowMs?: number;
  /**
   * Drive the CLI over the Agent Client Protocol instead of a PTY: `args` is its flag for that
   * (`['--acp']`), added to its usual arguments; permission requests are dialogs (`ask`).
   */
  acp?: { args: string[] };
}

/** Answers every prompt with `Reply to <marker>.` where the prompt holds `ask-<marker>`, anything else briefly. */
export function defaultScript(request: ModelRequest): ModelAnswer {
  const marker = /\bask-([a-z0-9]+)\b/u.exec(request.lastUserText)?.[1];
  return { text: marker ? `Reply to ${marker}.` : 'OK' };
}

/** Starts `name` (which must be installed: check `requireAgentCli(name).skip` first). */
export async function startRealAgent(name: AgentCliName, options: StartOptions = {}): Promise<RunningAgent> {
  const cli = requireAgentCli(name);
  if (!cli.available) throw new Error(cli.skip);
  const dir = await realpath(await mkdtemp(join(tmpdir(), `agent-${name}-`)));
  const home = join(dir, 'home');
  const workdir = join(dir, 'work');
  await mkdir(home, { recursive: true });
  await mkdir(workdir, { recursive: true });
  const model = await startScriptedModel(options.script ?? defaultScript);
  const gateway = await startScriptedGateway(model.url, join(dir, 'auths'));
  const place = {
    gatewayUrl: gateway.url,
    home,
    workdir,
    trusted: options.trusted ?? true,
    // The scripted model answers 404 to anything but its API: an npm registry with no packages.
    emptyRegistry: model.url.replace(/\/v1$/u, '/npm/'),
  };
  const setup = CLI_SETUPS[name](place);
  await setup.prepare(place);
  const [command, ...launcher] = cli.command;
  const stderr: string[] = [];
  let server: AgentSessionServer | undefined;
  try {
    server = await startAgentSessionServer({
      ...(options.acp
        ? {
            transport: 'acp' as const,
            acpPermissions: 'ask' as const,
            // Qwen Code 0.24.4 took 32 s to answer `initialize` on a loaded machine.
            acpHandshakeTimeoutMs: 120_000,
            onStderr: (text: string) => stderr.push(text),
          }
        : {}),
      command: command!,
      args: [...launcher, ...setup.args, ...(options.acp?.args ?? [])],
      agentType: name,
      cwd: workdir,
      env: { ...commonEnv(home), ...setup.env },
      port: 0,
      cols: options.cols ?? 120,
      rows: options.rows ?? 40,
      stableWindowMs: options.stableWindowMs ?? STABLE_WINDOW_MS,
      onWarning() {},
    });
  } catch (error) {
    await gateway.close();
    await model.close();
    throw error;
  }
  const running = server;
  let stopping: Promise<void> | undefined;
  return {
    server: running,
    model,
    gateway,
    workdir,
    version: cli.version,
    stderr,
    stop() {
      stopping ??= (async () => {
        const pid = (running.session as { pid?: number }).pid;
        await running.close().catch(() => undefined);
        killGroup(pid);
        killProgramsUnder(dir);
        await gateway.close().catch(() => undefined);
        await model.close();
        await rm(dir, { recursive: true, force: true, maxRetries: 3 });
      })();
      return stopping;
    },
  };
}

/** The agent session server's API, as a client calls it. */
export function api(server: AgentSessionServer) {
  const call = async (path: string, init?: RequestInit) => {
    const response = await fetch(`${server.url}${path}`, init);
    return { status: response.status, body: (await response.json()) as Json };
  };
  const post = (path: string, body: unknown) =>
    call(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return {
    status: () => call('/status'),
    messages: async () => (await call('/messages')).body.messages as { id: number; role: string; content: string }[],
    message: (content: string) => post('/message', { type: 'user', content }),
    raw: (content: string) => post('/message', { type: 'raw', content }),
    dialog: (option: number) => post('/dialog', { option }),
    screen: () => call('/screen'),
  };
}
