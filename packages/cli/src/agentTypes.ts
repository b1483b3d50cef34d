/**
 * @module agentTypes
 * The coding-agent types the CLI names (`yard agent serve --type`, `yard
 * implement --agent-type`) and the command each runs by default. Kept
 * apart, without imports, so checking a flag loads neither the agent
 * session server nor the workflow.
 */

/** The agent types `--agent-type` runs (the session server's, less `custom` and `generic`). */
export const AGENT_TYPE_NAMES = [
  'claude',
  'codex',
  'gemini',
  'qwen',
  'opencode',
  'aider',
  'goose',
  'amp',
  'copilot',
  'cursor',
  'auggie',
  'amazonq',
] as const;

/** The types whose usual command is not their name. */
const COMMAND_OTHER_THAN_TYPE: Readonly<Record<string, string>> = { cursor: 'cursor-agent', amazonq: 'q' };

/** The command an agent type runs when `--agent-command` does not say otherwise; undefined for an unknown type. */
export function usualCommand(agentType: string): string | undefined {
  if (!(AGENT_TYPE_NAMES as readonly string[]).includes(agentType)) return undefined;
  return COMMAND_OTHER_THAN_TYPE[agentType] ?? agentType;
}
