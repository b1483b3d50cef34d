/**
 * The coding-agent matrix (issue 28): five real CLIs (Claude Code, Codex,
 * Gemini CLI, Qwen Code, OpenCode, pinned devDependencies of test-support),
 * each headless through the gateway, against a scripted upstream of each
 * family (OpenAI chat, OpenAI Responses, Anthropic Messages, Gemini): one
 * tool-calling turn with a reasoning block per cell (agents/agentCell.ts).
 * Twenty CLI runs take minutes, so the whole matrix runs only with
 * SWITCHYARD_AGENT_MATRIX=1 (`pnpm test:agents`, its own CI step); the main
 * suite runs the smoke rows (claudeCodeCli.test.ts, codexCli.test.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { requireAgentCli } from '@switchyard/test-support';
import { assertAgentCell } from './agents/agentCell.js';
import { AGENT_CLIENTS } from './agents/clients.js';
import { FAMILIES } from './agents/scriptedUpstream.js';

const enabled = process.env.SWITCHYARD_AGENT_MATRIX === '1';
const scratch = await mkdtemp(join(tmpdir(), 'agent-matrix-'));
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await rm(scratch, { recursive: true, force: true });
});

const only = (process.env.SWITCHYARD_AGENT_MATRIX_CLIENTS ?? '').split(',').filter(Boolean);
for (const client of Object.values(AGENT_CLIENTS)) {
  if (only.length > 0 && !only.includes(client.cli)) continue;
  const cli = enabled ? requireAgentCli(client.cli) : undefined;
  const skip = !enabled ? 'the full agent matrix runs with SWITCHYARD_AGENT_MATRIX=1 (`pnpm test:agents`)' : cli?.skip;
  describe(`${client.label} ${cli?.available ? cli.version : ''} (${client.ingress}) through the gateway`, { skip }, () => {
    for (const family of FAMILIES)
      test(`${family} upstream: thinks, runs ${client.tool}, the output goes upstream, the final text is printed`, async (t) => {
        const { offLoopback } = await assertAgentCell(client, family, scratch, cleanups);
        // What the CLI reached for past the gateway (refused at once by the test's proxy): docs/coding-agents.md lists it.
        if (offLoopback.length > 0) t.diagnostic(`refused off-loopback: ${[...new Set(offLoopback)].join(', ')}`);
      });
  });
}
