// Captures the screens a real CLI shows behind the agent session server (after start-up, while it
// works on a turn, after the reply) as the JSON the screen-recording tests replay
// (packages/agent-session/test/fixtures/screens/). Run it again when a pinned CLI moves:
//
//   node --conditions=@switchyard/source --import tsx tests/agents/captureScreens.mts codex > packages/agent-session/test/fixtures/screens/codex.json
import { rulesFor } from '@switchyard/agent-session/engine';
import type { AgentCliName } from '@switchyard/test-support';
import { api, startRealAgent } from './agentHarness.js';
import { untilStable } from './realAgentChecks.js';

const name = process.argv[2] as AgentCliName;
const agent = await startRealAgent(name);
const client = api(agent.server);
const screen = async () => ((await client.screen()).body.lines as string[]).map((line) => line.trimEnd());
try {
  await untilStable(agent, 150_000);
  const startup = await screen();
  const held = agent.model.holdNext('ask-one');
  const input = 'Please answer ask-one in one sentence.';
  await client.message(input);
  const turn = await held;
  const busy = rulesFor(name).busy!;
  let working = await screen();
  for (const deadline = Date.now() + 60_000; !busy({ lines: working }) && Date.now() < deadline; working = await screen())
    await new Promise((resolve) => setTimeout(resolve, 100));
  turn.release();
  await untilStable(agent);
  const reply = await screen();
  const cols = 120; // startRealAgent's terminal: 120×40
  process.stdout.write(
    `${JSON.stringify({ agent: name, version: agent.version, captured: new Date().toISOString().slice(0, 10), cols, rows: startup.length, input, expected: 'Reply to one.', startup, working, reply }, null, 1)}\n`,
  );
} finally {
  await agent.stop();
}
process.exit(0);
