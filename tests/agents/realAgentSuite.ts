/**
 * @module realAgentSuite
 * The test every real CLI but Claude Code gets (one file each,
 * `<cli>.agents.test.ts`, run by `pnpm test:agents`): start it behind the
 * agent session server, see it stable, then two round trips. Claude Code's
 * (claude.test.ts) runs in the main suite.
 */
import { after, describe, test } from 'node:test';
import { type AgentCliName, requireAgentCli } from '@switchyard/test-support';
import { type RunningAgent, STABLE_WINDOW_MS, startRealAgent } from './agentHarness.js';
import { roundTrip, startsStable } from './realAgentChecks.js';

/**
 * `stableWindowMs`: the quiet-screen window the agent needs here. OpenCode shows nothing between
 * drawing the user's message and its first busy indicator while it sets the session up, which on
 * a loaded machine takes longer than the default window.
 */
export function realAgentSuite(name: AgentCliName, title: string, stableWindowMs = STABLE_WINDOW_MS) {
  // Minutes on a loaded machine: with the coding-agent matrix, in `pnpm test:agents` (its own CI step).
  const enabled = process.env.SWITCHYARD_AGENT_MATRIX === '1';
  const cli = requireAgentCli(name);
  const skip = enabled ? cli.skip : 'the real-CLI agent session tests run with SWITCHYARD_AGENT_MATRIX=1 (`pnpm test:agents`)';
  let agent: RunningAgent | undefined;
  after(() => agent?.stop());
  describe(`${title} ${cli.available ? cli.version : ''}, live in a PTY behind the agent session server`, { skip }, () => {
    test('stable after start-up; running while it works; each round trip one clean agent message', { timeout: 420_000 }, async () => {
      agent = await startRealAgent(name, { stableWindowMs });
      await startsStable(agent);
      await roundTrip(agent, name, 'one', stableWindowMs);
      await roundTrip(agent, name, 'two', stableWindowMs);
    });
  });
}
