/**
 * @module acpSession
 * An agent spoken to over the Agent Client Protocol (https://agentclientprotocol.com)
 * on its stdin/stdout, through the official SDK (`@agentclientprotocol/sdk`),
 * behind the same {@link AgentSession} surface as a terminal agent. No screen
 * scraping: replies, thoughts, tool calls and plans arrive as `session/update`
 * notifications (see acpUpdates) and a turn ends when `session/prompt`
 * answers, so the status is exact.
 *
 * This client advertises no file-system or terminal capabilities: the agent
 * uses its own tools. Permission requests are answered by a policy (see
 * acpPermissions); raw input maps Ctrl-C and Esc to `session/cancel`.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { type ClientConnection, client, methods, ndJsonStream, RequestError } from '@agentclientprotocol/sdk';
import { type Clock, type Scheduler, systemClock, systemScheduler } from '@switchyard/runtime';
import { type AgentSession, checkRawInput, checkUserMessage } from '../agentSession.js';
import { type AgentExit, Conversation, describeExit } from '../conversation.js';
import { AgentSessionError } from '../errors.js';
import { resolveCommand } from '../pty/terminalProgram.js';
import { type AcpPermissionPolicy, AcpPermissions, DEFAULT_PERMISSION_TIMEOUT_MS } from './acpPermissions.js';
import { AcpUpdateRecorder } from './acpUpdates.js';

/** The ACP version this client speaks. */
export const ACP_PROTOCOL_VERSION = 1;

/** Options of {@link AcpAgentSession.start}. */
export interface AcpSessionOptions {
  command: string;
  args?: readonly string[];
  /** Working directory of the agent and of its ACP session (default: the server's). */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  agentType?: string;
  /** Answer to `session/request_permission` (default `reject`: the agent may not edit or run anything that needs a grant). */
  permissions?: AcpPermissionPolicy;
  /** With `permissions: 'ask'`, how long a request waits for an answer before it is denied (default 5 minutes). */
  permissionTimeoutMs?: number;
  /** Timers (the permission timeout); default: the system's. */
  scheduler?: Scheduler;
  /** An `authMethods[].id` from the agent's `initialize` answer, to authenticate with before the session starts. */
  authMethodId?: string;
  /** Longest wait for `initialize`, `authenticate` and `session/new` (default 30 s). */
  handshakeTimeoutMs?: number;
  /** Receives the agent's stderr (default: discarded). */
  onStderr?: (text: string) => void;
  clock?: Clock;
}

/** How long an agent that closed its output may take to exit before it is stopped. */
const OUTPUT_CLOSED_GRACE_MS = 1000;

/**
 * An agent driven over ACP.
 *
 * @example
 * ```ts
 * const session = await AcpAgentSession.start({ command: 'my-acp-agent', args: ['--acp'] });
 * await session.sendMessage('Summarise README.md');
 * ```
 */
export class AcpAgentSession implements AgentSession {
  readonly transport = 'acp' as const;
  readonly agentType: string;
  readonly conversation: Conversation;
  private readonly connection: ClientConnection;
  private readonly updates: AcpUpdateRecorder;
  private readonly permissions: AcpPermissions;
  private sessionId = '';
  private prompting = false;
  private exited: AgentExit | undefined;
  private closed = false;
  /** The agent closed its output: nothing it says can reach us any more. */
  private outputClosed = false;
  private readonly exitedPromise: Promise<void>;

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly options: AcpSessionOptions,
  ) {
    this.agentType = options.agentType ?? 'acp';
    this.conversation = new Conversation(options.clock ?? systemClock, 'running');
    this.updates = new AcpUpdateRecorder(this.conversation);
    this.permissions = new AcpPermissions(this.conversation, this.updates, {
      policy: options.permissions ?? 'reject',
      timeoutMs: options.permissionTimeoutMs ?? DEFAULT_PERMISSION_TIMEOUT_MS,
      scheduler: options.scheduler ?? systemScheduler,
    });
    // Requests this client does not serve (fs/*, terminal/*) are answered "method not found" by the SDK.
    const app = client({ name: 'switchyard-agent-session' })
      .onRequest(methods.client.session.requestPermission, ({ params }) => this.permissions.request(params))
      .onNotification(methods.client.session.update, ({ params }) => {
        if (params.sessionId === this.sessionId) this.updates.apply(params.update);
      });
    this.connection = app.connect(
      ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>),
    );
    child.stdout.once('end', () => this.onOutputClosed());
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => options.onStderr?.(text));
    this.exitedPromise = new Promise((done) => {
      const ended = (exit: AgentExit) => {
        if (this.exited) return;
        this.onExit(exit);
        done();
      };
      child.once('exit', (exitCode, signal) => ended({ exitCode, signal }));
      // A spawn failure (the file vanished, no permission) arrives as 'error' and no 'exit'.
      child.once('error', (error) => {
        this.conversation.error(`the agent could not run: ${error.message}`, true);
        ended({ exitCode: null, signal: null });
      });
    });
  }

  /** Starts the agent and opens an ACP session (`initialize`, optional `authenticate`, `session/new`). */
  static async start(options: AcpSessionOptions): Promise<AcpAgentSession> {
    const cwd = resolve(options.cwd ?? process.cwd());
    const env = options.env ?? process.env;
    const file = resolveCommand(options.command, cwd, env);
    const child = spawn(file, [...(options.args ?? [])], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const session = new AcpAgentSession(child, options);
    try {
      await session.handshake(cwd);
    } catch (error) {
      await session.close();
      if (error instanceof AgentSessionError) throw error;
      throw new AgentSessionError('start_failed', `the ACP agent did not start a session: ${(error as Error).message}`, { cause: error });
    }
    return session;
  }

  get exit(): AgentExit | undefined {
    return this.exited;
  }

  screen(): undefined {
    return undefined;
  }

  /** A permission request waiting for an answer (policy `ask`), as a dialog. */
  dialog() {
    return this.conversation.dialog;
  }

  async answerDialog(option: number): Promise<void> {
    this.assertOpen();
    this.permissions.answer(option);
  }

  async sendMessage(content: string): Promise<void> {
    checkUserMessage(content);
    this.assertOpen();
    const dialog = this.conversation.dialog;
    if (dialog)
      throw new AgentSessionError('dialog_open', 'the agent asks for permission: answer it with POST /dialog {"option": N} first', {
        details: { dialog },
      });
    if (this.prompting || this.conversation.status === 'running')
      throw new AgentSessionError(
        'busy',
        'the agent is running; wait until its status is stable, or cancel the turn with raw input "\\u0003"',
      );
    this.prompting = true;
    this.conversation.setStatus('running');
    this.conversation.addUser(content);
    this.updates.startTurn();
    const turn = this.connection.agent.request(methods.agent.session.prompt, {
      sessionId: this.sessionId,
      prompt: [{ type: 'text', text: content }],
    });
    // The message has been handed over; the turn ends when the agent answers the request.
    void turn.then(
      (result) => this.endTurn(result.stopReason),
      (error: Error) => this.endTurn(undefined, error),
    );
  }

  async sendRaw(data: string): Promise<void> {
    checkRawInput(data);
    this.assertOpen();
    if (data !== '\x03' && data !== '\x1b')
      throw new AgentSessionError(
        'not_supported',
        'over ACP, raw input can only be "\\u0003" (Ctrl-C) or "\\u001b" (Esc), which cancel the turn',
        {
          field: 'content',
        },
      );
    if (this.prompting) {
      // ACP: a client that cancels answers the permission requests still open with `cancelled`.
      this.permissions.withdraw();
      void this.connection.agent.notify(methods.agent.session.cancel, { sessionId: this.sessionId }).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.connection.close(new AgentSessionError('closed', 'the session is closed'));
    await this.terminate();
  }

  /** Stops the agent (SIGTERM, then SIGKILL after 2 s) and waits for its exit. */
  private async terminate(): Promise<void> {
    if (this.exited) return;
    this.child.stdin.end();
    this.child.kill('SIGTERM');
    const killTimer = setTimeout(() => this.child.kill('SIGKILL'), 2000);
    killTimer.unref();
    await this.exitedPromise;
    clearTimeout(killTimer);
  }

  /**
   * The agent closed its output. Its exit usually follows at once and ends the conversation; one that
   * keeps running can never answer again, so it is stopped, and that exit ends the conversation.
   */
  private onOutputClosed(): void {
    this.outputClosed = true;
    if (this.closed || this.exited) return;
    const timer = setTimeout(() => {
      if (this.closed || this.exited) return;
      this.conversation.error('the agent closed its output while still running; stopping it');
      void this.terminate();
    }, OUTPUT_CLOSED_GRACE_MS);
    timer.unref();
  }

  private async handshake(cwd: string): Promise<void> {
    const timeoutMs = this.options.handshakeTimeoutMs ?? 30_000;
    const exitedDuring = (what: string) =>
      new AgentSessionError('start_failed', `the ACP agent exited during ${what} (${describeExit(this.exited!)})`);
    const step = <T>(request: Promise<T>, what: string): Promise<T> => {
      // The agent's output usually closes just before its exit is known: report the exit, not the closed pipe.
      const promise = request.catch(async (error: unknown) => {
        if (this.connection.signal.aborted) await Promise.race([this.exitedPromise, new Promise((done) => setTimeout(done, 1000).unref())]);
        throw this.exited ? exitedDuring(what) : error;
      });
      return Promise.race([
        promise,
        this.exitedPromise.then(() => {
          throw exitedDuring(what);
        }),
        new Promise<never>((_, reject) => {
          const timer = setTimeout(
            () => reject(new AgentSessionError('start_failed', `the ACP agent did not answer ${what} within ${timeoutMs} ms`)),
            timeoutMs,
          );
          timer.unref();
          void promise.finally(() => clearTimeout(timer)).catch(() => {});
        }),
      ]);
    };
    const agent = this.connection.agent;
    const init = await step(
      agent.request(methods.agent.initialize, {
        protocolVersion: ACP_PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: 'switchyard-agent-session', version: '1' },
      }),
      'initialize',
    );
    if (init.protocolVersion !== ACP_PROTOCOL_VERSION)
      throw new AgentSessionError(
        'start_failed',
        `the ACP agent speaks protocol version ${String(init.protocolVersion)}, this client ${ACP_PROTOCOL_VERSION}`,
      );
    if (this.options.authMethodId)
      await step(agent.request(methods.agent.authenticate, { methodId: this.options.authMethodId }), 'authenticate');
    const created = await step(agent.request(methods.agent.session.new, { cwd, mcpServers: [] }), 'session/new');
    if (typeof created.sessionId !== 'string' || created.sessionId === '')
      throw new AgentSessionError('protocol_error', 'session/new answered without a sessionId');
    this.sessionId = created.sessionId;
    this.conversation.setStatus('stable');
  }

  private endTurn(stopReason: unknown, error?: Error): void {
    this.prompting = false;
    this.permissions.withdraw();
    // A connection that ended is reported once, as the exit, not as a failed prompt.
    if (error && !this.closed && !this.exited && !this.connection.signal.aborted) {
      const detail = error instanceof RequestError ? `${error.message} (code ${error.code})` : error.message;
      this.conversation.error(`the agent failed the prompt: ${detail}`);
    } else if (stopReason !== undefined && stopReason !== 'end_turn' && stopReason !== 'cancelled') {
      this.conversation.error(`the agent stopped its turn: ${String(stopReason)}`);
    }
    // A turn cut short by a closed output is not over: the agent is on its way out, and its exit settles the status.
    if (!this.exited && !this.outputClosed) this.conversation.setStatus('stable');
  }

  private assertOpen(): void {
    if (this.closed) throw new AgentSessionError('closed', 'the session is closed');
    if (this.exited) throw new AgentSessionError('agent_exited', `the agent has exited (${describeExit(this.exited)})`);
    if (this.outputClosed) throw new AgentSessionError('agent_exited', 'the agent closed its output: it takes no more input');
  }

  private onExit(exit: AgentExit): void {
    this.exited = exit;
    this.permissions.withdraw();
    this.connection.close(new AgentSessionError('agent_exited', `the agent exited (${describeExit(exit)})`));
    if (this.closed) return;
    this.conversation.error(`the agent exited (${describeExit(exit)})`, true);
    this.conversation.end(exit);
    this.conversation.emit('exit', exit);
  }
}
