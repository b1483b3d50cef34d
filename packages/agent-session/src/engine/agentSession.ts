/**
 * @module agentSession
 * What every transport offers: one interactive agent with a conversation
 * (messages, status, events), user messages, raw keys, and a way to stop.
 * The HTTP server and embedders program against {@link AgentSession} and do
 * not care whether a terminal or ACP sits behind it.
 */
import type { AgentExit, Conversation } from './conversation.js';
import { AgentSessionError } from './errors.js';
import type { ScreenSnapshot } from './pty/headlessScreen.js';
import type { Dialog } from './rules/dialogs.js';

/** How the engine talks to the agent. */
export type AgentTransport = 'pty' | 'acp';

/** Limits every transport enforces on input. */
export const INPUT_LIMITS = {
  /** Largest user message, in UTF-8 bytes. */
  maxMessageBytes: 256 * 1024,
  /** Largest raw input, in UTF-8 bytes. */
  maxRawBytes: 4 * 1024,
} as const;

/**
 * One running agent.
 *
 * @example
 * ```ts
 * const session = await startAgentSession({ transport: 'pty', command: 'python3', args: ['-i'] });
 * session.conversation.on('status_change', ({ status }) => console.log(status));
 * await session.sendMessage('print(6 * 7)');
 * ```
 */
export interface AgentSession {
  readonly transport: AgentTransport;
  /** The agent kind (`--type`), e.g. `generic` or `claude`. */
  readonly agentType: string;
  /** Messages, status and errors, with typed events. */
  readonly conversation: Conversation;
  /** How the agent ended, once it has. */
  readonly exit: AgentExit | undefined;
  /**
   * Sends a user message and records it. Rejects with `dialog_open` while
   * the agent shows a dialog (the text would answer it), `busy` while the
   * agent runs, `invalid_input` for empty or oversized content, and
   * `agent_exited` after the agent ended. Resolves once the message has
   * been handed to the agent, not when the agent has answered.
   */
  sendMessage(content: string): Promise<void>;
  /** The choice or confirmation the agent shows, if any (also on `conversation.dialog`). */
  dialog(): Dialog | undefined;
  /**
   * Picks option `option` (1-based) of the dialog the agent shows. Rejects with `no_dialog`
   * when none is shown and `invalid_input` (field `option`) for an option it does not have.
   */
  answerDialog(option: number): Promise<void>;
  /** Sends keys (`\x03` for Ctrl-C, `\x1b` for Esc) without recording anything; accepted while the agent runs. */
  sendRaw(data: string): Promise<void>;
  /** The terminal screen (PTY only). */
  screen(): ScreenSnapshot | undefined;
  /** Calls `listener` when the screen may have changed; returns the unsubscribe. Undefined without a screen (ACP). */
  watchScreen?(listener: () => void): () => void;
  /** Stops the agent and releases everything. Idempotent. */
  close(): Promise<void>;
}

/** C0 controls and DEL, except tab, line feed and carriage return. */
const hasControlCharacter = (text: string) => {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || code === 0x7f) return true;
  }
  return false;
};

/** Validates a user message; throws `invalid_input` naming the field. */
export function checkUserMessage(content: unknown): string {
  if (typeof content !== 'string') throw new AgentSessionError('invalid_input', 'content must be a string', { field: 'content' });
  if (content.trim() === '') throw new AgentSessionError('invalid_input', 'content must not be empty', { field: 'content' });
  if (Buffer.byteLength(content, 'utf8') > INPUT_LIMITS.maxMessageBytes)
    throw new AgentSessionError('invalid_input', `content must be at most ${INPUT_LIMITS.maxMessageBytes} bytes`, { field: 'content' });
  if (hasControlCharacter(content))
    throw new AgentSessionError('invalid_input', 'content must not contain control characters; send keys with type "raw"', {
      field: 'content',
    });
  return content;
}

/** Validates raw input; throws `invalid_input` naming the field. */
export function checkRawInput(data: unknown): string {
  if (typeof data !== 'string' || data === '')
    throw new AgentSessionError('invalid_input', 'content must be a non-empty string', { field: 'content' });
  if (Buffer.byteLength(data, 'utf8') > INPUT_LIMITS.maxRawBytes)
    throw new AgentSessionError('invalid_input', `raw content must be at most ${INPUT_LIMITS.maxRawBytes} bytes`, { field: 'content' });
  return data;
}
