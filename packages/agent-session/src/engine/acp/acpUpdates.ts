/**
 * @module acpUpdates
 * Turns the agent's `session/update` notifications into the conversation:
 * message chunks grow the agent's reply, thought chunks grow a thought,
 * tool calls and their updates become one tool-call activity each (merged
 * field by field, as ACP sends only what changed), and a plan replaces the
 * turn's plan. Updates this server has no use for (commands, modes, usage)
 * are ignored.
 */
import type { ContentBlock, SessionUpdate, ToolCall, ToolCallContent, ToolCallUpdate } from '@agentclientprotocol/sdk';
import { capToolContent, type ToolCallActivity } from '../activity.js';
import type { Conversation } from '../conversation.js';

/** A content block as one line of text: its text, or what it is. */
function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'resource_link':
      return block.uri;
    case 'resource':
      return 'text' in block.resource ? block.resource.text : block.resource.uri;
    default:
      return `[${block.type}]`;
  }
}

/** What a tool produced, as text: diffs and terminals are named (their bodies can be large). */
export function toolContentText(content: readonly ToolCallContent[]): string {
  return capToolContent(
    content
      .map((item) => {
        if (item.type === 'content') return blockText(item.content);
        if (item.type === 'diff') return `edit ${item.path}`;
        return `terminal ${item.terminalId}`;
      })
      .join('\n'),
  );
}

/**
 * Records one session's updates in a conversation.
 *
 * @example
 * ```ts
 * const recorder = new AcpUpdateRecorder(conversation);
 * recorder.startTurn();
 * recorder.apply({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Hi' } });
 * ```
 */
export class AcpUpdateRecorder {
  private turn = 0;
  private thoughts = 0;
  /** The thought being streamed; any other update ends it. */
  private thought: { id: string; text: string } | undefined;

  constructor(private readonly conversation: Conversation) {}

  /** A prompt starts: its plan is a new one, and no thought carries over. */
  startTurn(): void {
    this.turn++;
    this.thought = undefined;
  }

  apply(update: SessionUpdate): void {
    if (update.sessionUpdate !== 'agent_thought_chunk') this.thought = undefined;
    switch (update.sessionUpdate) {
      case 'agent_message_chunk':
        if (update.content.type === 'text') this.conversation.appendAgent(update.content.text);
        return;
      case 'agent_thought_chunk':
        this.think(blockText(update.content));
        return;
      case 'tool_call':
      case 'tool_call_update':
        this.toolCall(update);
        return;
      case 'plan':
        this.conversation.recordActivity({
          type: 'plan',
          id: `plan-${this.turn}`,
          entries: update.entries.map(({ content, priority, status }) => ({ content, priority, status })),
        });
        return;
      default:
        return;
    }
  }

  /**
   * Adds or updates a tool call: fields the update leaves out keep their value. Permission
   * requests carry the tool call too, and agents may send it there first.
   */
  toolCall(update: ToolCall | ToolCallUpdate): void {
    const known = this.conversation.activity(update.toolCallId);
    const before = known?.type === 'tool_call' ? known : undefined;
    const next: Omit<ToolCallActivity, 'afterMessage' | 'time'> = {
      type: 'tool_call',
      id: update.toolCallId,
      title: update.title ?? before?.title ?? 'tool call',
      kind: update.kind ?? before?.kind ?? 'other',
      status: update.status ?? before?.status ?? 'pending',
      content: update.content ? toolContentText(update.content) : (before?.content ?? ''),
      locations: update.locations ? update.locations.map((location) => location.path) : (before?.locations ?? []),
    };
    this.conversation.recordActivity(next);
  }

  private think(text: string): void {
    if (!this.thought) this.thought = { id: `thought-${++this.thoughts}`, text: '' };
    this.thought.text += text;
    this.conversation.recordActivity({ type: 'thought', id: this.thought.id, text: this.thought.text });
  }
}
