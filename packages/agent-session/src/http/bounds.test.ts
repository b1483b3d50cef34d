// The agent server's bounds against a client that opens stream after stream or uploads file after file:
// both are refused past their caps, with an answer that says so, and room frees when a stream closes.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { systemScheduler } from '@switchyard/runtime';
import type { AgentSession } from '../engine/agentSession.js';
import { Conversation } from '../engine/conversation.js';
import { createAgentApi } from './agentApi.js';

/** A session that never changes: the bounds are the API's, not the agent's. */
class QuietSession implements AgentSession {
  readonly transport = 'pty' as const;
  readonly agentType = 'quiet';
  readonly conversation = new Conversation(systemScheduler, 'stable');
  readonly exit = undefined;
  async sendMessage() {}
  async sendRaw() {}
  screen() {
    return { lines: ['$'], cursor: { row: 0, col: 1 }, cols: 80, rows: 1, alternate: false };
  }
  watchScreen() {
    return () => undefined;
  }
  dialog() {
    return undefined;
  }
  async answerDialog() {}
  async close() {}
}

const uploadDir = await mkdtemp(join(tmpdir(), 'agent-bounds-'));
after(() => rm(uploadDir, { recursive: true, force: true }));
const api = createAgentApi(new QuietSession(), {
  uploadDir,
  events: { maxSubscribers: 2, heartbeatMs: 60_000 },
  maxUploads: 3,
  uploadDirLimitBytes: 10,
});

/** A request as a local client sends it (the host allowlist wants a Host header). */
const call = (path: string, init: RequestInit = {}) =>
  api.app.request(path, { ...init, headers: { host: 'localhost', ...(init.headers as Record<string, string> | undefined) } });

test('event and screen streams past the cap get 429 with Retry-After; closing one makes room', async () => {
  const first = await call('/events');
  const second = await call('/screen', { headers: { accept: 'text/event-stream' } });
  assert.deepEqual([first.status, second.status], [200, 200]);
  const refused = await call('/events');
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('retry-after'), '5');
  assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'too_many_requests');
  assert.equal((await call('/screen', { headers: { accept: 'text/event-stream' } })).status, 429);
  await first.body?.cancel();
  const again = await call('/events');
  assert.equal(again.status, 200, 'a closed stream frees its place');
  await again.body?.cancel();
  await second.body?.cancel();
  assert.equal(api.events.size, 0);
});

test('uploads past the file count or the directory size are refused, and nothing more is written', async () => {
  const upload = (name: string, text: string) => {
    const form = new FormData();
    form.append('file', new Blob([text]), name);
    return call('/upload', { method: 'POST', body: form });
  };
  assert.equal((await upload('a.txt', 'aaaa')).status, 200);
  assert.equal((await upload('b.txt', 'bbbb')).status, 200);
  const tooBig = await upload('c.txt', 'ccc');
  assert.equal(tooBig.status, 413, 'the directory would pass 10 bytes');
  assert.match(((await tooBig.json()) as { error: { message: string } }).error.message, /upload directory is full/);
  assert.equal((await upload('d.txt', 'dd')).status, 200);
  const tooMany = await upload('e.txt', '');
  assert.equal(tooMany.status, 413, 'a fourth file passes the count');
  assert.equal((await readdir(uploadDir)).length, 3);
});
