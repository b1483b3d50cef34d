// The CLI keeps its own list of agent types (checking a flag must not load the agent session server);
// this pins it to the server's, so the two cannot drift apart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AGENT_TYPES } from '@switchyard/agent-session/engine';
import { AGENT_TYPE_NAMES } from '../src/agentTypes.js';

test("the CLI's agent types are the session server's, less custom and generic", () => {
  assert.deepEqual([...AGENT_TYPE_NAMES].sort(), AGENT_TYPES.filter((type) => type !== 'custom' && type !== 'generic').sort());
});
