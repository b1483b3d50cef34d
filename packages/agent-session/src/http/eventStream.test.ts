// /events: replay then status, resume with Last-Event-ID, slow readers coalesced, heartbeats.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { getRequestListener } from '@hono/node-server';
import { FakeScheduler, systemScheduler } from '@switchyard/runtime';
import { eventually, openEvents } from '@switchyard/test-support';
import { type AgentSessionServer, startAgentSessionServer } from '../agentSessionServer.js';
import type { AgentSession } from '../engine/agentSession.js';
import { Conversation } from '../engine/conversation.js';
import { createAgentApi } from './agentApi.js';

/** A transport stand-in for stream mechanics: the conversation is driven by the test. */
class ScriptedSession implements AgentSession {
  readonly transport = 'pty' as const;
  readonly agentType = 'scripted';
  readonly conversation: Conversation;
  readonly exit = undefined;
  constructor(clock = systemScheduler) {
    this.conversation = new Conversation(clock, 'stable');
  }
  async sendMessage(content: string) {
    this.conversation.addUser(content);
  }
  async sendRaw() {}
  screen() {
    return undefined;
  }
  dialog() {
    return this.conversation.dialog;
  }
  async answerDialog() {
    this.conversation.setDialog(undefined);
  }
  async close() {}
}

const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

describe('against python3 -i', () => {
  let server: AgentSessionServer;
  after(() => server?.close());

  test('a new subscriber gets the messages, then the status; a resumed one gets only what it missed', async () => {
    server = await startAgentSessionServer({ command: 'python3', args: ['-i', '-q'], port: 0, stableWindowMs: 300 });
    const send = (content: string) =>
      fetch(`${server.url}/message`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ content }),
      });

    const first = await openEvents(`${server.url}/events`);
    assert.equal(first.status, 200);
    await first.waitFor((e) => e.event === 'status_change' && e.data.status === 'stable', 'stable', 20_000);
    assert.equal((await send('print(6 * 7)')).status, 200);
    await first.waitFor((e) => e.event === 'message_update' && e.data.role === 'agent' && e.data.content === '42', 'the reply');
    const stableAgain = first.events.filter((e) => e.event === 'status_change').length;
    await first.waitFor(
      (e) =>
        e.event === 'status_change' &&
        e.data.status === 'stable' &&
        first.events.filter((x) => x.event === 'status_change').length > stableAgain,
      'stable after the reply',
    );
    const reply = first.events.find((e) => e.data.content === '42')!;
    assert.equal(reply.data.message, '42', 'agentapi clients read `message`');
    assert.equal(reply.data.id, 1);
    const resumeFrom = first.lastId()!;
    first.close();

    assert.equal((await send('print("missed")')).status, 200);
    const watcher = await openEvents(`${server.url}/events`, { 'last-event-id': resumeFrom });
    await watcher.waitFor((e) => e.data.content === 'missed', 'the reply to the missed message');
    await watcher.waitFor((e) => e.event === 'status_change' && e.data.status === 'stable' && watcher.events.at(-1) === e, 'stable again');
    watcher.close();
    const late = await openEvents(`${server.url}/events`);
    await late.waitFor((e) => e.data.content === 'missed' && late.events.at(-1)?.event === 'status_change', 'a full replay');
    const replayTypes = late.events.map((e) => e.event);
    assert.equal(replayTypes.at(-1), 'status_change', 'the status closes the replay');
    assert.deepEqual(
      late.events.filter((e) => e.event === 'message_update').map((e) => [e.data.id, e.data.content]),
      [
        [0, 'print(6 * 7)'],
        [1, '42'],
        [2, 'print("missed")'],
        [3, 'missed'],
      ],
    );
    const closing = late.events.findIndex((e) => e.event === 'status_change');
    assert.ok(
      late.events.slice(0, closing).every((e) => e.id === undefined),
      'replayed messages carry no id',
    );
    assert.match(late.events[closing]!.id ?? '', /^[0-9a-f]{8}-\d+$/, 'the closing status carries the id to resume from');
    late.close();

    const resumed = await openEvents(`${server.url}/events`, { 'last-event-id': resumeFrom });
    await resumed.waitFor((e) => e.data.content === 'missed', 'the missed reply');
    const contents = resumed.events.filter((e) => e.event === 'message_update').map((e) => e.data.content);
    assert.deepEqual(contents, ['print("missed")', 'missed'], 'only what changed after the id');
    const ids = resumed.events.map((e) => Number(e.id?.split('-')[1]));
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
      'resumed events come in order with ids',
    );
    resumed.close();

    const foreign = await openEvents(`${server.url}/events?last_event_id=deadbeef-3`);
    await foreign.waitFor((e) => e.event === 'status_change', 'a replay for a foreign id');
    assert.equal(foreign.events.filter((e) => e.event === 'message_update').length, 4);
    foreign.close();
  });
});

describe('stream mechanics', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(() => Promise.all(cleanups.map((close) => close())));

  async function serve(session: AgentSession, options: { heartbeatMs?: number; scheduler?: FakeScheduler } = {}) {
    const uploadDir = await mkdtemp(join(tmpdir(), 'agent-events-'));
    dirs.push(uploadDir);
    const api = createAgentApi(session, {
      uploadDir,
      events: options.heartbeatMs ? { heartbeatMs: options.heartbeatMs } : {},
      ...(options.scheduler ? { scheduler: options.scheduler } : {}),
    });
    const http = createServer(getRequestListener(api.app.fetch));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const { port } = http.address() as { port: number };
    return {
      api,
      port,
      url: `http://127.0.0.1:${port}`,
      close: () => {
        api.close();
        http.closeAllConnections();
        return new Promise<void>((resolve) => http.close(() => resolve()));
      },
    };
  }

  test('a reader that stops is never cut and costs one batch, not every update: it gets the current state when it reads again', async () => {
    const session = new ScriptedSession();
    const served = await serve(session);
    cleanups.push(served.close);
    const healthy = await openEvents(`${served.url}/events`);
    const stalled = connect(served.port, '127.0.0.1');
    await new Promise<void>((resolve) => stalled.once('connect', () => resolve()));
    stalled.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${served.port}\r\nAccept: text/event-stream\r\n\r\n`);
    stalled.pause();
    await eventually('both subscribers', () => served.api.events.size === 2);

    session.conversation.addUser('go');
    const chunk = 'y'.repeat(200 * 1024);
    const updates = 300;
    for (let i = 1; i <= updates; i++) {
      session.conversation.updateAgent(`${i} ${chunk}`);
      // The healthy subscriber reads each update before the next; the stalled one reads nothing.
      await healthy.waitFor((e) => String(e.data.content).startsWith(`${i} `), `update ${i}`);
    }
    assert.equal(served.api.events.size, 2, 'the stalled subscriber is still subscribed');
    session.conversation.updateAgent('final answer');
    await healthy.waitFor((e) => e.data.content === 'final answer', 'the healthy subscriber keeps up');

    let received = '';
    stalled.setEncoding('utf8');
    stalled.on('data', (text: string) => {
      received += text;
    });
    stalled.resume();
    await eventually('the latest state for the reader that slept', () => received.includes('"content":"final answer"'));
    // 60 MB of updates went out while it slept. What it gets is what the kernel's socket buffers took before
    // the server held back (a few MB on loopback), then the latest state, not each update.
    const sent = updates * chunk.length;
    assert.ok(received.length < sent / 4, `${received.length} bytes of ${sent} for a reader that missed ${updates} updates`);
    stalled.destroy();
    healthy.close();
  });

  test('the end of the agent reaches live, resumed and new subscribers in the status, as /status says it', async () => {
    const session = new ScriptedSession();
    const served = await serve(session);
    cleanups.push(served.close);
    const live = await openEvents(`${served.url}/events`);
    await live.waitFor((e) => e.event === 'status_change', 'the replay');
    const before = live.lastId()!;
    // The status was stable already: the end still has to be announced.
    session.conversation.end({ exitCode: null, signal: 'SIGKILL' });
    const exited = { exit_code: null, signal: 'SIGKILL' };
    const announced = await live.waitFor((e) => e.event === 'status_change' && e.data.exited !== undefined, 'the end, live');
    assert.deepEqual(announced.data, { status: 'stable', agent_type: 'scripted', transport: 'pty', exited });
    live.close();
    const resumed = await openEvents(`${served.url}/events`, { 'last-event-id': before });
    assert.deepEqual((await resumed.waitFor((e) => e.event === 'status_change', 'the end, resumed')).data.exited, exited);
    resumed.close();
    const late = await openEvents(`${served.url}/events`);
    assert.deepEqual((await late.waitFor((e) => e.event === 'status_change', 'the end, replayed')).data.exited, exited);
    late.close();
  });

  test('a dialog appearing and going is a status change for live, resumed and new subscribers; the status keeps its value', async () => {
    const session = new ScriptedSession();
    const served = await serve(session);
    cleanups.push(served.close);
    const live = await openEvents(`${served.url}/events`);
    await live.waitFor((e) => e.event === 'status_change', 'the replay');
    const before = live.lastId()!;
    const dialog = { text: 'Allow this tool?', options: ['Yes', 'No'] };
    session.conversation.setDialog(dialog);
    const shown = await live.waitFor((e) => e.event === 'status_change' && e.data.dialog !== undefined, 'the dialog, live');
    assert.deepEqual(shown.data, { status: 'stable', agent_type: 'scripted', transport: 'pty', dialog });
    const resumed = await openEvents(`${served.url}/events`, { 'last-event-id': before });
    assert.deepEqual((await resumed.waitFor((e) => e.event === 'status_change', 'the dialog, resumed')).data.dialog, dialog);
    resumed.close();
    const late = await openEvents(`${served.url}/events`);
    assert.deepEqual((await late.waitFor((e) => e.event === 'status_change', 'the dialog, replayed')).data.dialog, dialog);
    late.close();
    assert.deepEqual(await (await fetch(`${served.url}/status`)).json(), {
      status: 'stable',
      agent_type: 'scripted',
      transport: 'pty',
      dialog,
    });
    session.conversation.setDialog(undefined);
    const gone = await live.waitFor(
      (e) => e.event === 'status_change' && e.data.dialog === undefined && e.id !== shown.id,
      'the dialog gone',
    );
    assert.equal(gone.data.status, 'stable');
    live.close();
  });

  test('HEAD /events answers the stream headers and subscribes nothing', async () => {
    const session = new ScriptedSession();
    const served = await serve(session);
    cleanups.push(served.close);
    for (let i = 0; i < 3; i++) {
      const head = await fetch(`${served.url}/events`, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.match(head.headers.get('content-type') ?? '', /^text\/event-stream/);
    }
    assert.equal(served.api.events.size, 0, 'no subscriber is left behind by a request that reads no body');
    assert.equal(session.conversation.listenerCount('message_update'), 0);
  });

  test('idle streams get heartbeat comments on the injected clock; closing the API ends open streams', async () => {
    const clock = new FakeScheduler(0);
    const session = new ScriptedSession(clock);
    const served = await serve(session, { heartbeatMs: 1000, scheduler: clock });
    cleanups.push(served.close);
    const stream = await openEvents(`${served.url}/events`);
    await stream.waitFor((e) => e.event === 'status_change', 'the replay');
    assert.equal(stream.comments.length, 0);
    await clock.advance(1000);
    await eventually('the heartbeat comment', () => stream.comments.length > 0);
    assert.deepEqual(stream.comments, ['ping']);
    served.api.close();
    assert.equal(served.api.events.size, 0);
    stream.close();
  });
});
