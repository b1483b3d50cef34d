/**
 * @module agentSessionServer
 * The agent session server: starts one agent (PTY or ACP), puts the HTTP API
 * in front of it on node:http, and tears both down together. This is what
 * `yard agent serve` runs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import { isIPv6 } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { assertSafeBind, continueWhenBodyIsRead, isLoopbackHost, openLoopbackWarning } from '@switchyard/http-kit';
import type { Scheduler } from '@switchyard/runtime';
import type { AcpPermissionPolicy } from './engine/acp/acpPermissions.js';
import type { AgentSession } from './engine/agentSession.js';
import { inferAgentType } from './engine/rules/agentRules.js';
import type { MessageRules } from './engine/rules/messageRules.js';
import { startAgentSession } from './engine/startAgentSession.js';
import { type AgentApi, createAgentApi } from './http/agentApi.js';
import { AgentStateWriter, loadAgentState } from './stateFile.js';

/** Options of {@link startAgentSessionServer}. */
export interface AgentSessionServerOptions {
  /** Interface to listen on (default 127.0.0.1). */
  host?: string;
  /** Port (default 3284; 0 picks a free one). */
  port?: number;
  /**
   * Agent type: picks the message rules (`claude`, `codex`, `gemini`, …, `custom`). Default: inferred
   * from the command's name (`generic` for other programs), or `acp` over ACP.
   */
  agentType?: string;
  /** `pty` (default): a terminal program. `acp`: an Agent Client Protocol agent on stdio. */
  transport?: 'pty' | 'acp';
  command: string;
  args?: string[];
  /** Working directory of the agent (default: the server's). */
  cwd?: string;
  /** Environment of the agent (default: the server's). */
  env?: NodeJS.ProcessEnv;
  /** `Host` headers served (default localhost, 127.0.0.1, ::1). Add the names clients use when listening on other interfaces. */
  allowedHosts?: string[];
  /** Origins allowed to call the API from a browser (default: same origin only). */
  cors?: { origins: string[] };
  /** How long the screen must stay unchanged for `stable` (default 2000 ms; PTY only). */
  stableWindowMs?: number;
  /** Require `Authorization: Bearer <apiKey>` on the API. Without one, only a loopback bind is served. */
  apiKey?: string;
  /** Serve a non-loopback address without an API key anyway (refused otherwise: anyone could type into the agent). */
  insecure?: boolean;
  /** Receives the start-up warning of a key-less server and security warnings (default: stderr). */
  onWarning?: (message: string) => void;
  /** Where `/upload` stores files (default: a new private temporary directory, removed on close). */
  uploadDir?: string;
  /** Largest upload (default 10 MiB). */
  uploadLimitBytes?: number;
  /** Terminal size (default 120×40; PTY only). */
  cols?: number;
  rows?: number;
  /** Message rules to use instead of the agent kind's (PTY only). */
  rules?: MessageRules;
  /** Answer to ACP permission requests (default `reject`; `ask` shows each as a dialog for `POST /dialog`). */
  acpPermissions?: AcpPermissionPolicy;
  /** With `acpPermissions: 'ask'`, how long a request waits before it is denied (default 5 minutes). */
  acpPermissionTimeoutMs?: number;
  /** Over ACP, the longest wait for the agent's `initialize` and `session/new` answers (default 30 s; a big CLI on a loaded machine may need more). */
  acpHandshakeTimeoutMs?: number;
  /** Receives an ACP agent's stderr. */
  onStderr?: (text: string) => void;
  /** Sent as the first user message once the agent is first stable with no dialog shown. */
  initialPrompt?: string;
  /**
   * Saves the `/messages` history here (atomically, mode 0600) and restores it on the next start.
   * The agent's own context is not saved: it is the agent's affair.
   */
  stateFile?: string;
  /** Time and timers (tests). */
  scheduler?: Scheduler;
}

/** A running server. */
export interface AgentSessionServer {
  /** Base URL, e.g. `http://127.0.0.1:3284`. */
  url: string;
  /** The agent behind it (for embedders: events, messages). */
  session: AgentSession;
  api: AgentApi;
  /** Ends event streams, stops listening, stops the agent. Idempotent. */
  close(): Promise<void>;
}

/**
 * The URL clients reach the server at. A wildcard address is where the server listens, not a name to
 * call it by: `http://0.0.0.0:…` carries `Host: 0.0.0.0`, which the host allowlist refuses, so the
 * loopback address of the same family stands in for it.
 *
 * @example
 * ```ts
 * serverUrl('0.0.0.0', 3284); // 'http://127.0.0.1:3284'
 * ```
 */
export function serverUrl(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const reachable = bare === '0.0.0.0' || bare === '' ? '127.0.0.1' : isIPv6(bare) && /^[0:]+$/.test(bare) ? '::1' : bare;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/** Sends `prompt` as a user message the first time the agent is stable with no dialog shown. */
function sendWhenReady(session: AgentSession, prompt: string): void {
  const conversation = session.conversation;
  let sent = false;
  const attempt = () => {
    if (sent || session.exit || conversation.status !== 'stable' || conversation.dialog) return;
    sent = true;
    conversation.off('status_change', attempt);
    session.sendMessage(prompt).catch((error: Error) => conversation.error(`the initial prompt was not sent: ${error.message}`));
  };
  conversation.on('status_change', attempt);
  attempt();
}

/**
 * Starts an agent and serves it over HTTP.
 *
 * @example
 * ```ts
 * const server = await startAgentSessionServer({ command: 'python3', args: ['-i'], port: 0 });
 * console.log(`${server.url}/chat`);
 * ```
 */
export async function startAgentSessionServer(options: AgentSessionServerOptions): Promise<AgentSessionServer> {
  const host = options.host ?? '127.0.0.1';
  // Before the agent starts: a refused bind must not leave a shell running.
  assertSafeBind({
    host,
    hasKeys: Boolean(options.apiKey),
    insecure: options.insecure ?? false,
    server: 'the agent session server',
    howToSetKey: 'pass --api-key-env NAME with the key in that environment variable (apiKey when embedding)',
  });
  const onWarning = options.onWarning ?? ((message: string) => process.stderr.write(`warning: ${message}\n`));
  const warning = openLoopbackWarning({ host, hasKeys: Boolean(options.apiKey), server: 'the agent session server' });
  if (warning) onWarning(warning);
  const transport = options.transport ?? 'pty';
  // Options both transports take, without the undefined ones (exactOptionalPropertyTypes).
  const common = {
    command: options.command,
    ...(options.args ? { args: options.args } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.agentType ? { agentType: options.agentType } : transport === 'pty' ? { agentType: inferAgentType(options.command) } : {}),
  };
  const session = await startAgentSession(
    transport === 'acp'
      ? {
          transport: 'acp',
          ...common,
          ...(options.acpPermissions ? { permissions: options.acpPermissions } : {}),
          ...(options.onStderr ? { onStderr: options.onStderr } : {}),
          ...(options.scheduler ? { clock: options.scheduler, scheduler: options.scheduler } : {}),
          ...(options.acpPermissionTimeoutMs !== undefined ? { permissionTimeoutMs: options.acpPermissionTimeoutMs } : {}),
          ...(options.acpHandshakeTimeoutMs !== undefined ? { handshakeTimeoutMs: options.acpHandshakeTimeoutMs } : {}),
        }
      : {
          transport: 'pty',
          ...common,
          ...(options.rules ? { rules: options.rules } : {}),
          ...(options.cols ? { cols: options.cols } : {}),
          ...(options.rows ? { rows: options.rows } : {}),
          ...(options.stableWindowMs !== undefined ? { stableWindowMs: options.stableWindowMs } : {}),
          ...(options.scheduler ? { scheduler: options.scheduler } : {}),
        },
  );
  let stateWriter: AgentStateWriter | undefined;
  try {
    if (options.stateFile) {
      session.conversation.restore(await loadAgentState(options.stateFile));
      stateWriter = new AgentStateWriter(options.stateFile, session.conversation, session.agentType, (error) =>
        session.conversation.error(`could not save the state file: ${error.message}`),
      );
    }
  } catch (error) {
    await session.close();
    throw error;
  }
  if (options.initialPrompt) sendWhenReady(session, options.initialPrompt);
  const ownUploadDir = options.uploadDir === undefined;
  let uploadDir = options.uploadDir ?? '';
  let server: Server | undefined;
  let api: AgentApi | undefined;
  try {
    if (ownUploadDir) uploadDir = await mkdtemp(join(tmpdir(), 'switchyard-agent-uploads-'));
    api = createAgentApi(session, {
      uploadDir,
      onWarning,
      ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
      ...(options.cors ? { cors: options.cors } : {}),
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      // The one way round the bind rule serves what it says: callers on other machines, without a key.
      remoteCallers: options.insecure === true && !options.apiKey && !isLoopbackHost(host),
      ...(options.uploadLimitBytes ? { uploadLimitBytes: options.uploadLimitBytes } : {}),
      ...(options.scheduler ? { scheduler: options.scheduler } : {}),
    });
    const listening = createServer(getRequestListener(api.app.fetch));
    // `Expect: 100-continue` gets its 100 only once a route reads the body: an upload over the cap, a
    // wrong key, host or media type is refused before the client sends it.
    continueWhenBodyIsRead(listening);
    server = listening;
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(options.port ?? 3284, host, () => {
        listening.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    server?.close();
    await stateWriter?.close();
    await session.close();
    if (ownUploadDir && uploadDir) await rm(uploadDir, { recursive: true, force: true });
    throw error;
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 3284);
  const url = serverUrl(host, port);
  let closing: Promise<void> | undefined;
  const readyApi = api;
  const readyServer = server;
  return {
    url,
    session,
    api: readyApi,
    close() {
      closing ??= (async () => {
        readyApi.close();
        await new Promise<void>((resolve) => {
          readyServer.close(() => resolve());
          readyServer.closeAllConnections();
        });
        await session.close();
        await stateWriter?.close();
        if (ownUploadDir) await rm(uploadDir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}
