/**
 * @module errors
 * The one base error of the agent session engine. Its `code` is stable and
 * snake_case; the HTTP layer maps each code to a status in one table, so a
 * busy agent is a 409 and bad input a 4xx, never a 500.
 */

/** Codes of {@link AgentSessionError}. */
export type AgentSessionErrorCode =
  /** A user message arrived while the agent was running or another message was being typed. */
  | 'busy'
  /** A user message arrived while the agent shows a dialog; `details.dialog` is the dialog. */
  | 'dialog_open'
  /** A dialog answer arrived while the agent shows none. */
  | 'no_dialog'
  /** The input failed validation; `field` names it. */
  | 'invalid_input'
  /** The transport cannot do this (raw keys over ACP, for example). */
  | 'not_supported'
  /** The agent process has exited; nothing more can be sent. */
  | 'agent_exited'
  /** The agent could not be started (missing command, failed handshake). */
  | 'start_failed'
  /** The agent broke the protocol (ACP) or answered with an error. */
  | 'protocol_error'
  /** An optional dependency (node-pty, @xterm/headless) is not installed. */
  | 'missing_dependency'
  /** The session was closed. */
  | 'closed';

/**
 * Base error of the agent session engine.
 *
 * @example
 * ```ts
 * try {
 *   await session.sendMessage('hello');
 * } catch (error) {
 *   if (error instanceof AgentSessionError && error.code === 'busy') console.log('wait for stable');
 * }
 * ```
 */
export class AgentSessionError extends Error {
  override name = 'AgentSessionError';
  readonly code: AgentSessionErrorCode;
  /** The input field at fault, for `invalid_input`. */
  readonly field: string | undefined;
  /** What a client needs to act on the error (the open dialog, for `dialog_open`). */
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: AgentSessionErrorCode,
    message: string,
    options: { field?: string; cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.field = options.field;
    this.details = options.details;
  }
}
