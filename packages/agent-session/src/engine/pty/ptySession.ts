/**
 * @module ptySession
 * An agent on a terminal. The screen is watched on an injected scheduler:
 * output marks it dirty, a snapshot follows shortly after (bursts coalesce),
 * and the agent is `stable` once the screen has not changed for the
 * stability window and no input is pending. The agent's message is what
 * changed on the screen since the user's last message, cleaned by the
 * agent kind's {@link MessageRules}.
 *
 * A user message is typed the way a terminal pastes: wrapped in bracketed
 * paste markers when the program asked for them (DECSET 2004), newlines as
 * carriage returns; once the program has shown it (or a timeout passes),
 * Enter follows. Its echo is stripped from the reply by the rules.
 */
import { type Scheduler, systemScheduler, type TimerHandle } from '@switchyard/runtime';
import { type AgentSession, checkRawInput, checkUserMessage } from '../agentSession.js';
import { type AgentExit, Conversation, describeExit } from '../conversation.js';
import { AgentSessionError } from '../errors.js';
import { rulesFor } from '../rules/agentRules.js';
import { type DetectedDialog, type Dialog, publicDialog } from '../rules/dialogs.js';
import type { MessageRules } from '../rules/messageRules.js';
import { answerDialogOnTerminal, type DialogTimings, type WatchedTerminal, waitForOutput } from './dialogAnswer.js';
import type { ScreenSnapshot } from './headlessScreen.js';
import { busyIndicatorOnScreen, changeSince, dialogOnScreen, inputAreaOnScreen, startTurn, type Turn } from './screenReading.js';
import { type SpawnOptions, spawnTerminalProgram, type TerminalProgram } from './terminalProgram.js';

/** Options of {@link PtyAgentSession.start}. */
export interface PtySessionOptions extends Partial<SpawnOptions> {
  /** Agent kind: picks the message rules (default `generic`). */
  agentType?: string;
  /** Rules to use instead of the kind's shipped ones. */
  rules?: MessageRules;
  /** How long the screen must stay unchanged for the agent to be `stable` (default 2000 ms). */
  stableWindowMs?: number;
  /** Delay between output and the snapshot that reads it; bursts within it coalesce (default 50 ms). */
  snapshotDelayMs?: number;
  /** Longest wait for a paste to show before Enter is sent anyway (default 3000 ms). */
  pasteTimeoutMs?: number;
  /**
   * A program that has shown nothing yet is still starting: it stays `running` until its first
   * output has settled, or this long after the start for programs that print nothing (default 10 s).
   */
  startupGraceMs?: number;
  /**
   * Longest time a full-screen agent stays `running` because its rules see no input area on screen
   * (see {@link MessageRules.ready}), counted from when one was last seen (or the start); then the
   * quiet screen alone decides (default 60 s).
   */
  readyTimeoutMs?: number;
  /**
   * Longest time the agent stays `running` after a user message while its screen shows no change
   * at all (it has not taken the message yet); then the quiet screen alone decides (default 15 s).
   */
  reactionTimeoutMs?: number;
  /**
   * How a dialog is answered (see dialogAnswer): the screen must hold still this long before the
   * first key and on the chosen option before Enter (`settleMs`, default 500 ms); the answer is given
   * up as not taken after `timeoutMs` (default 20 s).
   */
  dialogTimings?: DialogTimings;
  /** Time and timers (default: the system's). */
  scheduler?: Scheduler;
  /** A program already on a terminal, instead of spawning `command` (tests, embedders with their own PTY). */
  program?: TerminalProgram;
}

/** Turns text into what a terminal sends when it is pasted. */
export function pasteSequence(text: string, bracketed: boolean): string {
  const body = text.replace(/\r?\n/g, '\r');
  return bracketed ? `\x1b[200~${body}\x1b[201~` : body;
}

/**
 * An agent driven through a pseudo-terminal.
 *
 * @example
 * ```ts
 * const session = await PtyAgentSession.start({ command: 'python3', args: ['-i'], stableWindowMs: 500 });
 * session.conversation.on('message_update', ({ message }) => console.log(message.role, message.content));
 * ```
 */
export class PtyAgentSession implements AgentSession {
  readonly transport = 'pty' as const;
  readonly agentType: string;
  readonly conversation: Conversation;
  private readonly rules: MessageRules;
  private readonly scheduler: Scheduler;
  private readonly stableWindowMs: number;
  private readonly snapshotDelayMs: number;
  private readonly pasteTimeoutMs: number;
  private readonly startupGraceMs: number;
  private readonly startedAt: number;
  private shownOutput = false;
  /** When the rules last saw the input area (or a dialog) on screen; the start before that. */
  private lastReadyAt: number;
  /** When Enter was sent after the user's message, until the screen next changes. */
  private enterSentAt: number | undefined;
  private readonly reactionTimeoutMs: number;
  private readonly readyTimeoutMs: number;
  private lastFingerprint = '';
  private lastChangeAt: number;
  private snapshotTimer: TimerHandle | undefined;
  private stabilityTimer: TimerHandle | undefined;
  private readonly changeWaiters = new Set<() => void>();
  private lastOutputAt: number;
  /** The program's keyboard and screen, for typing that waits on what the screen shows. */
  private readonly terminal: WatchedTerminal;
  private readonly dialogTimings: DialogTimings;
  private pending = false;
  private turn: Turn | undefined;
  private exited: AgentExit | undefined;
  private closed = false;
  private readonly exitedPromise: Promise<void>;
  private readonly stopWatching: () => void;

  private constructor(
    private readonly program: TerminalProgram,
    options: PtySessionOptions,
  ) {
    this.scheduler = options.scheduler ?? systemScheduler;
    this.agentType = options.agentType ?? 'generic';
    this.rules = options.rules ?? rulesFor(options.agentType);
    this.stableWindowMs = options.stableWindowMs ?? 2000;
    this.snapshotDelayMs = options.snapshotDelayMs ?? 50;
    this.pasteTimeoutMs = options.pasteTimeoutMs ?? 3000;
    this.startupGraceMs = options.startupGraceMs ?? 10_000;
    this.readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
    this.reactionTimeoutMs = options.reactionTimeoutMs ?? 15_000;
    this.conversation = new Conversation(this.scheduler, 'running');
    this.lastChangeAt = this.scheduler.now();
    this.startedAt = this.lastChangeAt;
    this.lastReadyAt = this.startedAt;
    this.lastOutputAt = this.startedAt;
    this.dialogTimings = options.dialogTimings ?? {};
    this.terminal = {
      scheduler: this.scheduler,
      write: (data) => this.program.write(data),
      dialog: () => this.detectDialog(),
      fingerprint: () => this.program.screen.fingerprint(),
      onOutput: (listener) => {
        this.changeWaiters.add(listener);
        return () => this.changeWaiters.delete(listener);
      },
      lastOutputAt: () => this.lastOutputAt,
    };
    this.lastFingerprint = program.screen.fingerprint();
    this.stopWatching = program.screen.onChange(() => this.onScreenChange());
    this.exitedPromise = new Promise((resolve) => program.onExit((exit) => resolve(this.onExit(exit))));
    this.scheduleStabilityCheck();
  }

  /** Starts `options.command` on a terminal (or adopts `options.program`). */
  static async start(options: PtySessionOptions): Promise<PtyAgentSession> {
    if (options.program) return new PtyAgentSession(options.program, options);
    if (!options.command) throw new AgentSessionError('invalid_input', 'command is required', { field: 'command' });
    return new PtyAgentSession(await spawnTerminalProgram({ ...options, command: options.command }), options);
  }

  get exit(): AgentExit | undefined {
    return this.exited;
  }

  /** The agent's process id: the leader of its own process group (the terminal's session). */
  get pid(): number | undefined {
    return this.program.pid;
  }

  screen(): ScreenSnapshot {
    return this.program.screen.snapshot();
  }

  watchScreen(listener: () => void): () => void {
    return this.program.screen.onChange(listener);
  }

  dialog(): Dialog | undefined {
    return this.conversation.dialog;
  }

  async sendMessage(content: string): Promise<void> {
    checkUserMessage(content);
    this.assertOpen();
    const dialog = this.pending ? undefined : this.detectDialog();
    if (dialog) {
      this.conversation.setDialog(publicDialog(dialog));
      throw new AgentSessionError(
        'dialog_open',
        'the agent shows a dialog: answer it with POST /dialog {"option": N} (or keys as a raw message) before sending a message',
        { details: { dialog: publicDialog(dialog) } },
      );
    }
    if (this.pending || this.conversation.status === 'running')
      throw new AgentSessionError('busy', 'the agent is running; wait until its status is stable, or interrupt it with raw input');
    this.pending = true;
    this.conversation.setStatus('running');
    try {
      this.takeSnapshot();
      this.turn = startTurn(this.program.screen, this.turn);
      this.conversation.addUser(content);
      const quietMs = this.rules.pasteSettleMs ?? 100;
      const shown = waitForOutput(this.terminal, quietMs, this.pasteTimeoutMs);
      this.program.write(pasteSequence(content, this.program.screen.bracketedPaste));
      await shown;
      this.program.write('\r');
      this.enterSentAt = this.scheduler.now();
    } catch (error) {
      if (!(error instanceof AgentSessionError)) this.conversation.error(`could not type the message: ${(error as Error).message}`);
      throw error;
    } finally {
      this.shownOutput = true;
      this.pending = false;
      this.lastChangeAt = this.scheduler.now();
      this.scheduleStabilityCheck();
    }
  }

  async answerDialog(option: number): Promise<void> {
    this.assertOpen();
    if (this.pending) throw new AgentSessionError('busy', 'input is being typed; wait until the status is stable');
    const dialog = this.detectDialog();
    if (!dialog) throw new AgentSessionError('no_dialog', 'the agent shows no dialog');
    if (!Number.isInteger(option) || option < 1 || option > dialog.options.length)
      throw new AgentSessionError('invalid_input', `option must be an integer from 1 to ${dialog.options.length}`, { field: 'option' });
    this.pending = true;
    try {
      await answerDialogOnTerminal(this.terminal, dialog, option, this.dialogTimings);
    } finally {
      this.pending = false;
      this.takeSnapshot();
      // The screen may have changed while the keys went in, when snapshots leave the dialog alone.
      this.refreshDialog();
      this.lastChangeAt = this.scheduler.now();
      this.conversation.setStatus('running');
      this.scheduleStabilityCheck();
    }
  }

  async sendRaw(data: string): Promise<void> {
    checkRawInput(data);
    this.assertOpen();
    this.program.write(data);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.clearTimers();
    this.stopWatching();
    if (!this.exited) {
      this.program.kill('SIGTERM');
      const killTimer = setTimeout(() => this.program.kill('SIGKILL'), 2000);
      killTimer.unref();
      await this.exitedPromise;
      clearTimeout(killTimer);
    }
    this.turn?.mark?.dispose();
    this.program.screen.dispose();
  }

  private assertOpen(): void {
    if (this.closed) throw new AgentSessionError('closed', 'the session is closed');
    if (this.exited) throw new AgentSessionError('agent_exited', `the agent has exited (${describeExit(this.exited)})`);
  }

  private onScreenChange(): void {
    this.lastOutputAt = this.scheduler.now();
    for (const waiter of this.changeWaiters) waiter();
    if (this.snapshotTimer !== undefined || this.closed) return;
    this.snapshotTimer = this.scheduler.setTimeout(() => {
      this.snapshotTimer = undefined;
      this.takeSnapshot();
    }, this.snapshotDelayMs);
  }

  /** Reads the screen; a change restarts the stability window and refreshes the agent's message. */
  private takeSnapshot(): void {
    if (this.snapshotTimer !== undefined) {
      this.scheduler.clearTimeout(this.snapshotTimer);
      this.snapshotTimer = undefined;
    }
    const fingerprint = this.program.screen.fingerprint();
    if (fingerprint === this.lastFingerprint) return;
    this.lastFingerprint = fingerprint;
    this.lastChangeAt = this.scheduler.now();
    this.shownOutput = true;
    if (!this.pending) this.enterSentAt = undefined;
    // While a message is being typed the screen shows a half-drawn echo: it is no reply yet.
    if (!this.pending) {
      this.refreshAgentMessage();
      this.refreshDialog();
    }
    if (!this.exited) this.conversation.setStatus('running');
    this.scheduleStabilityCheck();
  }

  private scheduleStabilityCheck(): void {
    if (this.closed || this.exited) return;
    if (this.stabilityTimer !== undefined) this.scheduler.clearTimeout(this.stabilityTimer);
    const quietAt = this.lastChangeAt + this.stableWindowMs;
    const settledAt = this.shownOutput ? quietAt : Math.max(quietAt, this.startedAt + this.startupGraceMs);
    const due = Math.max(0, settledAt - this.scheduler.now());
    this.stabilityTimer = this.scheduler.setTimeout(() => {
      this.stabilityTimer = undefined;
      this.checkStability();
    }, due);
  }

  private checkStability(): void {
    if (this.pending) return;
    if (this.snapshotTimer !== undefined) this.takeSnapshot();
    const quietFor = this.scheduler.now() - this.lastChangeAt;
    const starting = !this.shownOutput && this.scheduler.now() - this.startedAt < this.startupGraceMs;
    if (starting || quietFor < this.stableWindowMs) {
      this.scheduleStabilityCheck();
      return;
    }
    if (busyIndicatorOnScreen(this.rules, this.program.screen) || this.inputAreaMissing() || this.awaitingReaction()) {
      // Quiet, but the agent says it works (a paused spinner, a tool waiting): look again a window later.
      this.conversation.setStatus('running');
      this.stabilityTimer = this.scheduler.setTimeout(() => {
        this.stabilityTimer = undefined;
        this.checkStability();
      }, this.stableWindowMs);
      return;
    }
    this.refreshAgentMessage();
    this.refreshDialog();
    this.conversation.setStatus('stable');
  }

  /** The dialog on the visible screen, per the rules. */
  private detectDialog(): DetectedDialog | undefined {
    return dialogOnScreen(this.rules, this.program.screen);
  }

  private refreshDialog(): void {
    const dialog = this.detectDialog();
    this.conversation.setDialog(dialog ? publicDialog(dialog) : undefined);
  }

  /**
   * A full-screen agent whose input area (or a dialog) is not on screen is not waiting for input:
   * it is starting (a big bundle loading on a busy machine) or redrawing (a cleared screen while
   * it switches views), however long the screen has been quiet. At most
   * {@link PtySessionOptions.readyTimeoutMs} after the input area was last seen (or the start).
   */
  private inputAreaMissing(): boolean {
    const ready = inputAreaOnScreen(this.rules, this.program.screen);
    if (ready === undefined) return false;
    const now = this.scheduler.now();
    if (ready) this.lastReadyAt = now;
    return !ready && now - this.lastReadyAt < this.readyTimeoutMs;
  }

  /**
   * Enter went in and the screen has not changed since: the agent has not taken the message yet
   * (a loaded machine, a program still starting). Stable then would tell the client the turn is
   * over before it began. At most {@link PtySessionOptions.reactionTimeoutMs} after Enter.
   */
  private awaitingReaction(): boolean {
    if (this.enterSentAt === undefined) return false;
    if (this.scheduler.now() - this.enterSentAt < this.reactionTimeoutMs) return true;
    this.enterSentAt = undefined;
    return false;
  }

  private refreshAgentMessage(): void {
    const change = changeSince(this.rules, this.program.screen, this.turn, this.conversation.last('user')?.content ?? '');
    try {
      this.conversation.updateAgent(this.rules.format(change));
    } catch (error) {
      this.conversation.error(`message rules "${this.rules.kind}" failed: ${(error as Error).message}`);
    }
  }

  private onExit(exit: AgentExit): void {
    this.exited = exit;
    this.clearTimers();
    for (const waiter of this.changeWaiters) waiter();
    if (this.closed) return;
    this.refreshAgentMessage();
    this.conversation.error(`the agent exited (${describeExit(exit)})`, true);
    this.conversation.end(exit);
    this.conversation.emit('exit', exit);
  }

  private clearTimers(): void {
    if (this.snapshotTimer !== undefined) this.scheduler.clearTimeout(this.snapshotTimer);
    if (this.stabilityTimer !== undefined) this.scheduler.clearTimeout(this.stabilityTimer);
    this.snapshotTimer = undefined;
    this.stabilityTimer = undefined;
  }
}
