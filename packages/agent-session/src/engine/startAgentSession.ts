/**
 * @module startAgentSession
 * One entry point for both transports, so the server (and embedders) pick a
 * transport with a string.
 */
import { AcpAgentSession, type AcpSessionOptions } from './acp/acpSession.js';
import type { AgentSession, AgentTransport } from './agentSession.js';
import { AgentSessionError } from './errors.js';
import { PtyAgentSession, type PtySessionOptions } from './pty/ptySession.js';

/** Options of {@link startAgentSession}: the transport, then that transport's options. */
export type StartAgentSessionOptions =
  | ({ transport?: 'pty' } & PtySessionOptions & { command: string })
  | ({ transport: 'acp' } & AcpSessionOptions);

/**
 * Starts an agent on the chosen transport (`pty` by default).
 *
 * @example
 * ```ts
 * const session = await startAgentSession({ command: 'bash', args: ['--norc', '-i'] });
 * session.conversation.on('message_update', ({ message }) => console.log(message.content));
 * ```
 */
export async function startAgentSession(options: StartAgentSessionOptions): Promise<AgentSession> {
  const transport: AgentTransport | string = options.transport ?? 'pty';
  if (transport === 'acp') return AcpAgentSession.start(options as AcpSessionOptions);
  if (transport === 'pty') return PtyAgentSession.start(options as PtySessionOptions);
  throw new AgentSessionError('invalid_input', `transport must be "pty" or "acp", not ${JSON.stringify(transport)}`, {
    field: 'transport',
  });
}
