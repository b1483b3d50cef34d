/**
 * @module acpSession
 * An agent spoken to over the Agent Client Protocol (JSON-RPC 2.0 over the
 * agent's stdin/stdout, https://agentclientprotocol.com), behind the same
 * {@link AgentSession} surface as a terminal agent. No screen scraping: the
 * agent's replies arrive as `session/update` chunks and a turn ends when
 * `session/prompt` answers, so the status is exact.
 *
 * This client advertises no file-system or terminal capabilities: the agent
 * uses its own tools. Permission requests are answered by a policy
 * (`reject` by default), or with `ask` shown as a dialog the client answers
 * (`answerDialog`), denied when nobody does in time; raw input maps Ctrl-C
 * and Esc to `session/cancel`.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { type Clock, type Scheduler, systemClock, systemScheduler, type TimerHandle } from '@switchyard/runtime';
import { type AgentSession, checkRawInput, checkUserMessage } from '../agentSession.js';
import { type AgentExit, Conversation, describeExit } from '../conversation.js';
import { AgentSessionError } from '../errors.js';
import { resolveCommand } from '../pty/terminalProgram.js';
import { ConnectionClosed, JsonRpcError, JsonRpcPeer, RPC_METHOD_NOT_FOUND } from './jsonRpc.js';

/** The ACP version this client speaks. */
export const ACP_PROTOCOL_VERSION = 1;

/**
 * How permission requests are answered: `allow` and `reject` choose the first option of the
 * matching kind; `ask` shows the request as a dialog for the client to answer.
 */
export type AcpPermissionPolicy = 'allow' | 'reject' | 'ask';

/** How long an `ask` permission request waits for an answer before it is denied (5 minutes). */
export const DEFAULT_PERMISSION_TIMEOUT_MS = 5 * 60_000;

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

interface PermissionOption {
  optionId: string;
  kind: string;
  name?: string;
}

/** A permission request waiting for the client (policy `ask`). */
interface PendingPermission {
  options: PermissionOption[];
  title: string;
  answer(outcome: unknown): void;
}

/** How long an agent that closed its output may take to exit before it is stopped. */
const OUTPUT_CLOSED_GRACE_MS = 1000;

function textOf(update: Record<string, unknown>): string | undefined {
  const content = update.content as { type?: unknown; text?: unknown } | undefined;
  return content?.type === 'text' && typeof content.text === 'string' ? content.text : undefined;
}

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
  private readonly peer: JsonRpcPeer;
  private sessionId = '';
  private prompting = false;
  private exited: AgentExit | undefined;
  private closed = false;
  /** The agent closed its output: nothing it says can reach us any more. */
  private outputClosed = false;
  private readonly exitedPromise: Promise<void>;
  private pendingPermission: PendingPermission | undefined;

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly options: AcpSessionOptions,
  ) {
    this.agentType = options.agentType ?? 'acp';
    this.conversation = new Conversation(options.clock ?? systemClock, 'running');
    this.peer = new JsonRpcPeer(child.stdout, child.stdin, {
      onRequest: (method, params) => this.onRequest(method, params),
      onNotification: (method, params) => this.onNotification(method, params),
      onProtocolError: (message) => this.conversation.error(`ACP protocol error: ${message}`),
    });
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
    const pending = this.pendingPermission;
    if (!pending) throw new AgentSessionError('no_dialog', 'the agent asks nothing (no permission request is waiting)');
    if (!Number.isInteger(option) || option < 1 || option > pending.options.length)
      throw new AgentSessionError('invalid_input', `option must be an integer from 1 to ${pending.options.length}`, { field: 'option' });
    pending.answer({ outcome: 'selected', optionId: pending.options[option - 1]!.optionId });
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
    const turn = this.peer.request('session/prompt', { sessionId: this.sessionId, prompt: [{ type: 'text', text: content }] });
    // The message has been handed over; the turn ends when the agent answers the request.
    void turn.then(
      (result) => this.endTurn((result as { stopReason?: unknown } | null)?.stopReason),
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
      this.pendingPermission?.answer({ outcome: 'cancelled' });
      this.peer.notify('session/cancel', { sessionId: this.sessionId });
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.peer.close(new AgentSessionError('closed', 'the session is closed'));
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
        if (error instanceof ConnectionClosed)
          await Promise.race([this.exitedPromise, new Promise((done) => setTimeout(done, 1000).unref())]);
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
    const init = (await step(
      this.peer.request('initialize', {
        protocolVersion: ACP_PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      }),
      'initialize',
    )) as { protocolVersion?: unknown } | null;
    if (init?.protocolVersion !== ACP_PROTOCOL_VERSION)
      throw new AgentSessionError(
        'start_failed',
        `the ACP agent speaks protocol version ${String(init?.protocolVersion)}, this client ${ACP_PROTOCOL_VERSION}`,
      );
    if (this.options.authMethodId) await step(this.peer.request('authenticate', { methodId: this.options.authMethodId }), 'authenticate');
    const created = (await step(this.peer.request('session/new', { cwd, mcpServers: [] }), 'session/new')) as {
      sessionId?: unknown;
    } | null;
    if (typeof created?.sessionId !== 'string' || created.sessionId === '')
      throw new AgentSessionError('protocol_error', 'session/new answered without a sessionId');
    this.sessionId = created.sessionId;
    this.conversation.setStatus('stable');
  }

  private endTurn(stopReason: unknown, error?: Error): void {
    this.prompting = false;
    this.pendingPermission?.answer({ outcome: 'cancelled' });
    // A connection that ended is reported once, as the exit, not as a failed prompt.
    if (error && !this.closed && !this.exited && !(error instanceof ConnectionClosed)) {
      const detail = error instanceof JsonRpcError ? `${error.message} (code ${error.rpcCode})` : error.message;
      this.conversation.error(`the agent failed the prompt: ${detail}`);
    } else if (stopReason !== undefined && stopReason !== 'end_turn' && stopReason !== 'cancelled') {
      this.conversation.error(`the agent stopped its turn: ${String(stopReason)}`);
    }
    // A turn cut short by a closed output is not over: the agent is on its way out, and its exit settles the status.
    if (!this.exited && !this.outputClosed) this.conversation.setStatus('stable');
  }

  private onNotification(method: string, params: unknown): void {
    if (method !== 'session/update') return;
    const { sessionId, update } = (params ?? {}) as { sessionId?: unknown; update?: Record<string, unknown> };
    if (sessionId !== this.sessionId || !update) return;
    if (update.sessionUpdate === 'agent_message_chunk') {
      const text = textOf(update);
      if (text !== undefined) this.conversation.appendAgent(text);
    }
  }

  private async onRequest(method: string, params: unknown): Promise<unknown> {
    if (method !== 'session/request_permission') throw new JsonRpcError(RPC_METHOD_NOT_FOUND, `${method} is not supported by this client`);
    const options = ((params as { options?: unknown })?.options ?? []) as PermissionOption[];
    if (this.options.permissions === 'ask') return this.ask(params as { toolCall?: { title?: unknown } }, options);
    const wanted = this.options.permissions === 'allow' ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
    const choice = wanted.map((kind) => options.find((option) => option?.kind === kind)).find(Boolean);
    return choice ? { outcome: { outcome: 'selected', optionId: choice.optionId } } : { outcome: { outcome: 'cancelled' } };
  }

  /**
   * Shows a permission request as a dialog and waits for `answerDialog`. Nobody answering within
   * the timeout denies it (the first reject option, else `cancelled`), and an `agent_error` says so;
   * a turn that ends meanwhile (cancelled, the agent gone) withdraws it.
   */
  private ask(params: { toolCall?: { title?: unknown } }, options: PermissionOption[]): Promise<unknown> {
    this.pendingPermission?.answer({ outcome: 'cancelled' });
    const scheduler = this.options.scheduler ?? systemScheduler;
    const timeoutMs = this.options.permissionTimeoutMs ?? DEFAULT_PERMISSION_TIMEOUT_MS;
    const title = typeof params.toolCall?.title === 'string' ? params.toolCall.title : 'a tool call';
    return new Promise((resolve) => {
      let timer: TimerHandle | undefined;
      const pending: PendingPermission = {
        options,
        title,
        answer: (outcome) => {
          if (this.pendingPermission !== pending) return;
          this.pendingPermission = undefined;
          if (timer !== undefined) scheduler.clearTimeout(timer);
          this.conversation.setDialog(undefined);
          resolve({ outcome });
        },
      };
      this.pendingPermission = pending;
      this.conversation.setDialog({
        text: `The agent asks for permission: ${title}`,
        options: options.map((option) => option.name ?? option.kind ?? option.optionId),
      });
      timer = scheduler.setTimeout(() => {
        timer = undefined;
        const reject = options.find((option) => option.kind === 'reject_once') ?? options.find((option) => option.kind === 'reject_always');
        this.conversation.error(`the permission request "${title}" was not answered within ${Math.round(timeoutMs / 1000)} s: denied`);
        pending.answer(reject ? { outcome: 'selected', optionId: reject.optionId } : { outcome: 'cancelled' });
      }, timeoutMs);
    });
  }

  private assertOpen(): void {
    if (this.closed) throw new AgentSessionError('closed', 'the session is closed');
    if (this.exited) throw new AgentSessionError('agent_exited', `the agent has exited (${describeExit(this.exited)})`);
    if (this.outputClosed) throw new AgentSessionError('agent_exited', 'the agent closed its output: it takes no more input');
  }

  private onExit(exit: AgentExit): void {
    this.exited = exit;
    this.pendingPermission?.answer({ outcome: 'cancelled' });
    this.peer.close(new AgentSessionError('agent_exited', `the agent exited (${describeExit(exit)})`));
    if (this.closed) return;
    this.conversation.error(`the agent exited (${describeExit(exit)})`, true);
    this.conversation.end(exit);
    this.conversation.emit('exit', exit);
  }
}
