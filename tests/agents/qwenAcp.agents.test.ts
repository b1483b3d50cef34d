// The real Qwen Code CLI (pinned in test-support) over the Agent Client Protocol (`--acp`) behind
// the agent session server, its model scripted behind the gateway, all on loopback. The model asks
// for one `write_file` call, then answers with text once the tool's result comes back. The agent's
// tool call and its permission request reach /events, the permission is a dialog answered through
// POST /dialog, and the file is written only after the approval; the reply is one agent message.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openEvents, requireAgentCli, type SseConnection } from '@switchyard/test-support';
import { api, type RunningAgent, startRealAgent } from './agentHarness.js';
import type { ModelAnswer, ModelRequest } from './scriptedModel.js';

const cli = requireAgentCli('qwen');
const PROOF = 'acp-was-here';
const FINAL_TEXT = 'Wrote proof.txt.';
let agent: RunningAgent | undefined;
let events: SseConnection | undefined;
after(async () => {
  events?.close();
  await agent?.stop();
});

describe(`Qwen Code ${cli.available ? cli.version : ''} over ACP behind the agent session server`, { skip: cli.skip }, () => {
  test('its tool call and permission request reach /events, POST /dialog approves, then the file is written and the reply comes', {
    timeout: 300_000,
  }, async () => {
    let proofPath = '';
    const script = (request: ModelRequest): ModelAnswer =>
      request.lastUserText.includes('ask-proof') && request.tools.includes('write_file') && !request.hasToolResult
        ? { tool: 'write_file', args: { file_path: proofPath, content: `${PROOF}\n` } }
        : { text: FINAL_TEXT };
    agent = await startRealAgent('qwen', { acp: { args: ['--acp'] }, script });
    proofPath = join(agent.workdir, 'proof.txt');
    const running = agent;
    const client = api(running.server);
    events = await openEvents(`${running.server.url}/events`);
    try {
      await events.waitFor((e) => e.event === 'status_change' && e.data.status === 'stable', 'the ACP session', 120_000);
      const sent = await client.message('Please write proof.txt (ask-proof).');
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      const request = await events.waitFor(
        (e) => e.event === 'permission' && e.data.outcome === 'requested',
        'the permission request',
        120_000,
      );
      const toolCall = events.events.find((e) => e.event === 'tool_call' && e.data.id === request.data.tool_call_id);
      assert.ok(toolCall, 'the tool call the permission is for came on /events');
      assert.equal(toolCall.data.kind, 'edit');
      assert.equal(existsSync(proofPath), false, 'nothing is written before the approval');

      const status = (await client.status()).body as { status: string; dialog?: { options: string[] } };
      assert.equal(status.status, 'running');
      const options = status.dialog?.options ?? [];
      const allowOnce = options.findIndex((option) => /^(allow|yes|proceed)\b/i.test(option) && !/always|session/i.test(option));
      assert.ok(allowOnce >= 0, `an allow option among ${JSON.stringify(options)}`);
      const answered = await client.dialog(allowOnce + 1);
      assert.equal(answered.status, 200, JSON.stringify(answered.body));
      await events.waitFor((e) => e.event === 'permission' && e.data.outcome === 'answered', 'the answer');
      await events.waitFor(
        (e) => e.event === 'tool_call' && e.data.id === request.data.tool_call_id && e.data.status === 'completed',
        'the tool call completed',
        120_000,
      );
      assert.equal(await readFile(proofPath, 'utf8'), `${PROOF}\n`);
      const reply = await events.waitFor(
        (e) => e.event === 'message_update' && e.data.role === 'agent' && String(e.data.content).includes(FINAL_TEXT),
        'the reply',
        120_000,
      );
      await events.waitFor(
        (e) => e.event === 'status_change' && e.data.status === 'stable' && events!.events.indexOf(e) > events!.events.indexOf(reply),
        'stable after the reply',
        120_000,
      );
      const agentMessages = (await client.messages()).filter((m) => m.role === 'agent');
      assert.deepEqual(
        agentMessages.map((m) => m.content.trim()),
        [FINAL_TEXT],
        'one agent message: the reply',
      );
      assert.ok(
        running.model.requests.some((r) => r.hasToolResult),
        'the tool result went back to the model through the gateway',
      );
    } catch (error) {
      throw new Error(
        `${(error as Error).message}\nagent stderr:\n${running.stderr.join('').slice(-3000)}\nevents: ${events.events
          .map((e) => e.event)
          .join(', ')}`,
        { cause: error },
      );
    }
  });
});
