/**
 * @module realAgentChecks
 * The checks every real coding-agent CLI must pass behind the agent session
 * server (issue 26): it becomes stable after start-up; while it works on a
 * turn (the scripted model holds its answer) it stays `running`, past the
 * quiet-screen window, with its own busy indicator on screen; and a round
 * trip gives exactly one agent message, the model's text and nothing of the
 * agent's banner, input box or status lines.
 */
import assert from 'node:assert/strict';
import { rulesFor } from '@switchyard/agent-session/engine';
import type { AgentCliName } from '@switchyard/test-support';
import { api, type RunningAgent } from './agentHarness.js';

/** Generous: a full-screen CLI loading on a shared, loaded machine. */
export const START_TIMEOUT_MS = 150_000;
const TURN_TIMEOUT_MS = 90_000;

/** Resolves once `check` holds (polled every 100 ms); fails with the agent's screen and messages after `timeoutMs`. */
export async function until(agent: RunningAgent, what: string, check: () => boolean | Promise<boolean>, timeoutMs = TURN_TIMEOUT_MS) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      const client = api(agent.server);
      const screen = (await client.screen()).body.lines as string[];
      assert.fail(
        `timed out after ${timeoutMs} ms waiting for ${what}\nstatus: ${JSON.stringify((await client.status()).body)}\nmessages: ${JSON.stringify(await client.messages(), null, 1)}\nscreen:\n${screen.join('\n')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits for `/status` to say `stable` with no dialog. */
export async function untilStable(agent: RunningAgent, timeoutMs = TURN_TIMEOUT_MS) {
  const client = api(agent.server);
  await until(
    agent,
    'status stable',
    async () => {
      const { body } = await client.status();
      return body.status === 'stable' && body.dialog === undefined;
    },
    timeoutMs,
  );
}

/** What no clean message may contain: input areas, rules, logos, footers and hints the CLIs draw. */
const CHROME = [
  /Type your message|Ask anything|Ask Codex to do anything/u,
  /^\s*[─━▄▀]{10,}\s*$/mu,
  /\? for shortcuts|ctrl\+p commands|shift \+ tab to cycle|esc to (?:interrupt|cancel)/iu,
  /[▐▛▜▝▘▟▙█╔╗╚╝⣿]{2,}/u,
  /^\s*[❯›]\s*$/mu,
];

/** Fails when `content` carries any of the CLIs' chrome. */
export function assertClean(content: string, what: string) {
  for (const pattern of CHROME) assert.doesNotMatch(content, pattern, `${what} carries chrome (${pattern}):\n${content}`);
}

/**
 * Posts a user message as a client should: when the agent is stable. An agent that redraws on its
 * own after a lull longer than the quiet window (Claude Code's start-up screens on a loaded machine)
 * is `running` again, and the message is refused as busy (409): then it waits for stable and posts
 * again. A refusal for any other reason (a dialog, bad input) is returned as it is.
 */
async function postWhenStable(agent: RunningAgent, content: string) {
  const client = api(agent.server);
  for (let attempt = 1; ; attempt++) {
    await untilStable(agent);
    const posted = await client.message(content);
    const error = posted.body.error as { code?: string; message?: string } | undefined;
    const busy = posted.status === 409 && error?.code === 'conflict' && /is running/.test(error.message ?? '');
    if (!busy || attempt === 5) return posted;
  }
}

/**
 * One turn: posts a message naming `marker`, sees the agent `running` with its busy indicator on
 * screen for longer than the quiet window while the model holds the answer, then releases it and
 * checks the one agent message that follows.
 */
export async function roundTrip(agent: RunningAgent, name: AgentCliName, marker: string, stableWindowMs: number) {
  const client = api(agent.server);
  const conversation = agent.server.session.conversation;
  const statuses: string[] = [];
  let stableScreen: string[] = [];
  const record = ({ status }: { status: string }) => {
    statuses.push(status);
    if (status === 'stable' && stableScreen.length === 0) stableScreen = agent.server.session.screen()?.lines ?? [];
  };
  conversation.on('status_change', record);
  try {
    const held = agent.model.holdNext(`ask-${marker}`);
    const posted = await postWhenStable(agent, `Please answer ask-${marker} in one sentence.`);
    assert.equal(posted.status, 200, JSON.stringify(posted.body));
    let arrived = false;
    const turn = held.then((t) => {
      arrived = true;
      return t;
    });
    await until(agent, 'the turn to reach the model', () => arrived);
    // Running, with the agent's own busy indicator shown, for twice the quiet window: the
    // indicator, not the quiet screen, decides.
    const busy = rulesFor(name).busy!;
    let busySince: number | undefined;
    await until(agent, `${name} running with its busy indicator for ${2 * stableWindowMs} ms`, async () => {
      const [status, screen] = await Promise.all([client.status(), client.screen()]);
      if (status.body.status !== 'running' || !busy({ lines: screen.body.lines as string[] })) busySince = undefined;
      else busySince ??= Date.now();
      return busySince !== undefined && Date.now() - busySince > 2 * stableWindowMs;
    });
    assert.ok(
      !statuses.includes('stable'),
      `never stable while the model held the turn: ${statuses.join(', ')}; screen when stable:\n${stableScreen.join('\n')}`,
    );
    (await turn).release();
    await until(agent, 'the reply, then stable', async () => {
      const { body } = await client.status();
      const last = (await client.messages()).at(-1);
      return body.status === 'stable' && last?.role === 'agent' && last.content.includes(`Reply to ${marker}.`);
    });
    const messages = await client.messages();
    const user = messages.findLastIndex((m) => m.role === 'user');
    assert.equal(messages[user]!.content, `Please answer ask-${marker} in one sentence.`);
    assert.deepEqual(
      messages.slice(user + 1).map((m) => [m.role, m.content]),
      [['agent', `Reply to ${marker}.`]],
      'exactly one clean agent message',
    );
  } finally {
    conversation.off('status_change', record);
  }
}

/** The start-up checks: stable within the start timeout, no dialog, any start-up message free of chrome. */
export async function startsStable(agent: RunningAgent) {
  await untilStable(agent, START_TIMEOUT_MS);
  for (const message of await api(agent.server).messages()) assertClean(message.content, 'the start-up message');
}
