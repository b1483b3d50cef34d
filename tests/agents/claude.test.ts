// The real Claude Code CLI (pinned in test-support) in a PTY behind the agent session server, its
// model scripted behind the gateway, all on loopback. The fastest of the five real CLIs, so it runs
// in the main suite (the others are `*.agents.test.ts`, a CI step of their own). It starts in a
// folder it does not trust yet, so its first screen is a dialog, answered through the API: the
// dialog is in /status and on /events, a user message is refused with 409 and the dialog, POST
// /dialog answers it, and then the checks every real CLI gets (realAgentChecks.ts). Claude Code
// ignores keys for a moment after it draws a dialog and then resets its menu; the engine answers
// once the menu holds still and checks each key on the screen (engine/pty/dialogAnswer.ts).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { openEvents, requireAgentCli, type SseConnection } from '@switchyard/test-support';
import { api, type RunningAgent, STABLE_WINDOW_MS, startRealAgent } from './agentHarness.js';
import { roundTrip, START_TIMEOUT_MS, startsStable, until } from './realAgentChecks.js';

const cli = requireAgentCli('claude');
let agent: RunningAgent | undefined;
let events: SseConnection | undefined;
after(async () => {
  events?.close();
  await agent?.stop();
});

interface Dialog {
  text: string;
  options: string[];
}

describe(`Claude Code ${cli.available ? cli.version : ''}, live in a PTY behind the agent session server`, {
  skip: cli.skip,
}, () => {
  test('its trust dialog is reported, blocks messages (409) and is answered by POST /dialog; then stable, running while it works, clean replies', {
    timeout: 420_000,
  }, async () => {
    agent = await startRealAgent('claude', { trusted: false });
    const client = api(agent.server);
    events = await openEvents(`${agent.server.url}/events`);

    let dialog: Dialog | undefined;
    await until(
      agent,
      'the trust dialog in /status',
      async () => {
        dialog = (await client.status()).body.dialog as Dialog | undefined;
        return dialog !== undefined;
      },
      START_TIMEOUT_MS,
    );
    assert.match(dialog!.text, /trust/i, JSON.stringify(dialog));
    assert.ok(dialog!.options.length >= 2, JSON.stringify(dialog));
    const trustOption = dialog!.options.findIndex((option) => /^Yes\b/.test(option)) + 1;
    assert.ok(trustOption > 0, `an option trusts the folder: ${JSON.stringify(dialog)}`);
    const announced = await events.waitFor((e) => e.event === 'status_change' && e.data.dialog !== undefined, 'the dialog on /events');
    assert.deepEqual(announced.data.dialog, dialog);

    const refused = await client.message('Please answer ask-early in one sentence.');
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    const error = refused.body.error as { code: string; details: { dialog: Dialog } };
    assert.equal(error.code, 'conflict');
    assert.deepEqual(error.details.dialog, dialog);
    assert.ok(!(await client.messages()).some((m) => m.role === 'user'), 'the refused message was not recorded');

    const answered = await client.dialog(trustOption);
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    await events.waitFor(
      (e) => e.event === 'status_change' && e.data.dialog === undefined && e.data.status === 'stable',
      'the dialog gone',
    );
    await startsStable(agent);
    assert.ok(
      !agent.model.requests.some((r) => r.lastUserText.includes('ask-early')),
      'the refused message never reached the model (it was not typed into the dialog)',
    );

    await roundTrip(agent, 'claude', 'one', STABLE_WINDOW_MS);
    await roundTrip(agent, 'claude', 'two', STABLE_WINDOW_MS);
  });
});
