import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { fakeServer, sendJson } from '../../test/fakeServer.js';
import { tempRepo } from '../../test/gitFixture.js';
import { doingWorkPackage } from '../../test/helpers.js';
import { WorkflowError } from '../errors.js';
import type { AgentTask } from './agentAdapter.js';
import { AgentSessionAdapter } from './agentSessionAdapter.js';
import { ProcessAgentAdapter } from './processAgentAdapter.js';

const wp = doingWorkPackage({ sequence: 2, title: 'Form' });
const config = { kind: 'process', timeout_ms: 20_000, review_cycles: 1 };
// The test runner's NODE_OPTIONS (tsx) cannot resolve from the temporary repository.
const env = { NODE_OPTIONS: '' };
const hooks = (chunks: string[] = [], signal = new AbortController().signal) => ({ signal, onOutput: (c: string) => chunks.push(c) });

describe('agent adapters in a temporary repository', () => {
  let repo: Awaited<ReturnType<typeof tempRepo>>;
  let task: AgentTask;
  before(async () => {
    repo = await tempRepo();
    task = {
      feature_slug: '001-login',
      work_package: wp,
      context: 'Context line',
      prompt: 'Build the form',
      worktree: repo.root,
      attempt: 1,
    };
  });
  after(() => repo.cleanup());

  test('process: prompt on stdin, runs in the worktree, output captured and streamed, commits and PR URL collected', async () => {
    const script = `
      const { execFileSync } = require('node:child_process');
      const fs = require('node:fs');
      let input = '';
      process.stdin.on('data', (d) => (input += d));
      process.stdin.on('end', () => {
        fs.writeFileSync('agent.txt', input + process.env.SWITCHYARD_FEATURE_SLUG + '/' + process.env.SWITCHYARD_WP_SEQUENCE);
        execFileSync('git', ['add', '-A']);
        execFileSync('git', ['commit', '-q', '-m', 'agent work']);
        console.log('done');
        console.error('PR_URL=https://code.example/pr/9');
      });`;
    const chunks: string[] = [];
    const result = await new ProcessAgentAdapter({ command: process.execPath, args: ['-e', script], env }).run(task, config, hooks(chunks));
    assert.equal(result.exit_code, 0);
    assert.equal(result.commits.length, 1);
    assert.equal(result.pr_url, 'https://code.example/pr/9');
    assert.match(result.output, /done/);
    assert.ok(chunks.join('').includes('done'));
    assert.equal(
      execFileSync('git', ['show', 'HEAD:agent.txt'], { cwd: repo.root, encoding: 'utf8' }),
      'Context line\n\nBuild the form\n001-login/2',
    );
  });

  test('process: a non-zero exit is reported, a timeout and a cancellation stop the agent', async () => {
    const failing = await new ProcessAgentAdapter({ command: process.execPath, args: ['-e', 'process.exit(7)'], env }).run(
      task,
      config,
      hooks(),
    );
    assert.deepEqual([failing.exit_code, failing.commits], [7, []]);
    const sleeper = new ProcessAgentAdapter({
      command: process.execPath,
      args: ['-e', 'setTimeout(() => {}, 60000)'],
      killGraceMs: 100,
      env,
    });
    await assert.rejects(
      sleeper.run(task, { ...config, timeout_ms: 300 }, hooks()),
      (e: unknown) => e instanceof WorkflowError && e.code === 'timeout',
    );
    const controller = new AbortController();
    const running = sleeper.run(task, config, hooks([], controller.signal));
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(running, (e: unknown) => e instanceof WorkflowError && e.code === 'cancelled');
    await assert.rejects(
      new ProcessAgentAdapter({ command: '/no/such/agent' }).run(task, config, hooks()),
      (e: unknown) => e instanceof WorkflowError && e.code === 'upstream_failed',
    );
    assert.throws(
      () => new ProcessAgentAdapter({ command: '--evil' }),
      (e: unknown) => e instanceof WorkflowError && e.code === 'unsafe_argument',
    );
  });

  test('agent-session: waits until stable, posts the prompt, streams message updates over SSE, returns when stable again', async () => {
    let status = 'running';
    const messages: { id: number; content: string; role: string; time: string }[] = [{ id: 0, content: 'hello', role: 'agent', time: '' }];
    let statusCalls = 0;
    const server = await fakeServer(async (req, res) => {
      if (req.url === '/status') {
        // Busy on the first look: the adapter must wait for "stable".
        if (++statusCalls > 1) status = 'stable';
        sendJson(res, 200, { status });
      } else if (req.url === '/messages') sendJson(res, 200, { messages });
      else if (req.url === '/message' && req.method === 'POST') {
        messages.push({ id: 1, content: (req.json as { content: string }).content, role: 'user', time: '' });
        sendJson(res, 200, { ok: true });
        setTimeout(() => {
          const frames = [
            ['status_change', { status: 'running' }],
            ['message_update', { id: 2, role: 'agent', message: 'Working', time: '' }],
            ['message_update', { id: 2, role: 'agent', message: 'Working on it\nPR_URL=https://code.example/pr/4', time: '' }],
            ['status_change', { status: 'stable' }],
          ] as const;
          messages.push({ id: 2, content: 'Working on it\nPR_URL=https://code.example/pr/4', role: 'agent', time: '' });
          for (const [event, data] of frames) sse?.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
        }, 20);
      } else if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(': connected\n\n');
        sse = res;
      } else res.writeHead(404).end();
    });
    let sse: import('node:http').ServerResponse | undefined;
    try {
      const chunks: string[] = [];
      const adapter = new AgentSessionAdapter({ baseUrl: server.url, pollIntervalMs: 10 });
      const result = await adapter.run(task, { ...config, kind: 'agent-session' }, hooks(chunks));
      assert.equal(result.exit_code, 0);
      assert.equal(result.pr_url, 'https://code.example/pr/4');
      assert.deepEqual(chunks, ['Working', ' on it\nPR_URL=https://code.example/pr/4']);
      const posted = server.requests.find((r) => r.url === '/message')!.json as { content: string; type: string };
      assert.deepEqual(posted, { content: 'Context line\n\nBuild the form', type: 'user' });
      assert.ok(statusCalls >= 2);
    } finally {
      await server.close();
    }
  });

  test('agent-session: an agent that dies mid-task ends the job with its exit code, not 0', async () => {
    let sse: import('node:http').ServerResponse | undefined;
    const messages: { id: number; content: string; role: string; time: string }[] = [];
    const server = await fakeServer(async (req, res) => {
      if (req.url === '/status') sendJson(res, 200, { status: 'stable' });
      else if (req.url === '/messages') sendJson(res, 200, { messages });
      else if (req.url === '/message' && req.method === 'POST') {
        sendJson(res, 200, { ok: true });
        setTimeout(() => {
          messages.push({ id: 1, content: 'Starting', role: 'agent', time: '' });
          sse?.write(`event: status_change\ndata: ${JSON.stringify({ status: 'running' })}\n\n`);
          sse?.write(`event: message_update\ndata: ${JSON.stringify({ id: 1, role: 'agent', message: 'Starting', time: '' })}\n\n`);
          // What the session server sends when the agent process ends: stable for good, with the exit.
          const exited = { status: 'stable', exited: { exit_code: 3, signal: null } };
          sse?.write(`event: status_change\ndata: ${JSON.stringify(exited)}\n\n`);
        }, 20);
      } else if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(': connected\n\n');
        sse = res;
      } else res.writeHead(404).end();
    });
    try {
      const result = await new AgentSessionAdapter({ baseUrl: server.url, pollIntervalMs: 10 }).run(task, config, hooks());
      assert.equal(result.exit_code, 3);
      assert.equal(result.output, 'Starting');
    } finally {
      await server.close();
    }
  });

  test('agent-session: an event past maxEventChars fails the job as upstream_failed instead of buffering it', async () => {
    let sse: import('node:http').ServerResponse | undefined;
    const server = await fakeServer(async (req, res) => {
      if (req.url === '/status') sendJson(res, 200, { status: 'stable' });
      else if (req.url === '/messages') sendJson(res, 200, { messages: [] });
      else if (req.url === '/message' && req.method === 'POST') {
        sendJson(res, 200, { ok: true });
        sse?.write(`event: status_change\ndata: ${JSON.stringify({ status: 'running' })}\n\n`);
        // An update that never ends: without a cap the reader would buffer it until the job times out.
        sse?.write(`event: message_update\ndata: ${JSON.stringify({ id: 1, role: 'agent', message: 'x'.repeat(70_000) })}`);
      } else if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(': connected\n\n');
        sse = res;
      } else res.writeHead(404).end();
    });
    try {
      const adapter = new AgentSessionAdapter({ baseUrl: server.url, pollIntervalMs: 10, maxEventChars: 65_536 });
      await assert.rejects(
        adapter.run(task, { ...config, kind: 'agent-session', timeout_ms: 5_000 }, hooks()),
        (e: unknown) => e instanceof WorkflowError && e.code === 'upstream_failed' && /sent an event over 65536 characters/.test(e.message),
      );
    } finally {
      sse?.destroy();
      await server.close();
    }
  });

  test('agent-session: an agent that has already exited is refused before the task is sent', async () => {
    const server = await fakeServer((req, res) => {
      if (req.url === '/status') sendJson(res, 200, { status: 'stable', exited: { exit_code: null, signal: 'SIGKILL' } });
      else res.writeHead(404).end();
    });
    try {
      await assert.rejects(
        new AgentSessionAdapter({ baseUrl: server.url, pollIntervalMs: 10 }).run(task, config, hooks()),
        (e: unknown) => e instanceof WorkflowError && e.code === 'upstream_failed' && /has exited \(signal SIGKILL\)/.test(e.message),
      );
      assert.equal(
        server.requests.some((r) => r.url === '/message'),
        false,
        'the task was not sent',
      );
    } finally {
      await server.close();
    }
  });

  test('agent-session: an unreachable server is an upstream failure, a silent one times out', async () => {
    const server = await fakeServer((req, res) => {
      if (req.url === '/status') sendJson(res, 200, { status: 'running' });
      else res.writeHead(404).end();
    });
    const address = server.url;
    try {
      await assert.rejects(
        new AgentSessionAdapter({ baseUrl: address, pollIntervalMs: 20 }).run(task, { ...config, timeout_ms: 1000 }, hooks()),
        (e: unknown) => e instanceof WorkflowError && e.code === 'timeout',
      );
    } finally {
      await server.close();
    }
    await assert.rejects(
      new AgentSessionAdapter({ baseUrl: address }).run(task, config, hooks()),
      (e: unknown) => e instanceof WorkflowError && e.code === 'upstream_failed',
    );
  });
});
