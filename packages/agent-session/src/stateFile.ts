/**
 * @module stateFile
 * The session server's state file (`yard agent serve --state-file`): the
 * `/messages` history, saved as it changes and restored on the next start,
 * so a restarted server shows the conversation so far. The agent's own
 * context is the agent's affair. The file is replaced atomically (written
 * beside it, then renamed) and readable by its owner only, since a
 * conversation may hold secrets.
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { writeFileAtomic } from '@switchyard/runtime/fs';
import type { AgentMessage, Conversation } from './engine/conversation.js';
import { AgentSessionError } from './engine/errors.js';

/** What the file holds. */
export interface AgentStateFile {
  version: 1;
  agent_type: string;
  messages: AgentMessage[];
}

/**
 * The messages saved in `path`: `[]` when the file does not exist; `invalid_input` (field
 * `state_file`) when it is not a state file, so a wrong path never gets overwritten.
 *
 * @example
 * ```ts
 * session.conversation.restore(await loadAgentState('/var/lib/agent/state.json'));
 * ```
 */
export async function loadAgentState(path: string): Promise<AgentMessage[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new AgentSessionError('invalid_input', `cannot read the state file ${path}: ${(error as Error).message}`, {
      field: 'state_file',
      cause: error,
    });
  }
  const bad = (why: string) =>
    new AgentSessionError('invalid_input', `${path} is not an agent state file (${why}); move it away or pick another path`, {
      field: 'state_file',
    });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw bad('not JSON');
  }
  const state = parsed as Partial<AgentStateFile> | null;
  if (state?.version !== 1 || !Array.isArray(state.messages)) throw bad('no version 1 and messages');
  return state.messages.map((message, index) => {
    const m = message as Partial<AgentMessage> | null;
    if (!m || (m.role !== 'user' && m.role !== 'agent') || typeof m.content !== 'string' || typeof m.time !== 'string')
      throw bad(`message ${index} is malformed`);
    return { id: index, role: m.role, content: m.content, time: m.time };
  });
}

/** Writes `state` to `path` atomically, mode 0600. */
export async function saveAgentState(path: string, state: AgentStateFile): Promise<void> {
  await writeFileAtomic(dirname(path), basename(path), `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600, exactMode: false });
}

/**
 * Keeps `path` up to date with `conversation`: one write after each burst of
 * changes (at most one write in flight; changes meanwhile are written next).
 */
export class AgentStateWriter {
  private dirty = false;
  private writing: Promise<void> | undefined;
  private readonly onChange = () => this.schedule();

  constructor(
    private readonly path: string,
    private readonly conversation: Conversation,
    private readonly agentType: string,
    private readonly onError: (error: Error) => void,
  ) {
    conversation.on('message_update', this.onChange);
  }

  private schedule(): void {
    this.dirty = true;
    this.writing ??= this.drain();
  }

  private async drain(): Promise<void> {
    // Let the rest of this tick's changes join the write.
    await Promise.resolve();
    while (this.dirty) {
      this.dirty = false;
      const state: AgentStateFile = { version: 1, agent_type: this.agentType, messages: this.conversation.messages() };
      await saveAgentState(this.path, state).catch((error: Error) => this.onError(error));
    }
    this.writing = undefined;
  }

  /** Stops following the conversation and waits for the last write. */
  async close(): Promise<void> {
    this.conversation.off('message_update', this.onChange);
    if (this.dirty) this.writing ??= this.drain();
    await this.writing;
  }
}
