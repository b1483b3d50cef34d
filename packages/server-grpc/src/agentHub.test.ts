// The hub's session bookkeeping, without the gRPC layer in between.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { test } from 'node:test';
import { tempGitRepo } from '@switchyard/test-support';
import { NotFoundError, type WorkPackage } from '@switchyard/workflow';
import { AgentHub, type HubPrompt } from './agentHub.js';

test('a session reserved for a task whose prompt is not out yet names no task, and a job cancelled meanwhile sends none', async () => {
  const { root } = await tempGitRepo({ prefix: 'hub-', readmeVersions: ['# x\n'] });
  const hub = new AgentHub({ heartbeatIntervalMs: 60_000 });
  const aborted = new AbortController();
  try {
    const { agent_id } = hub.registerAgent({ name: 'remote-1', agent_type: 'codex', capabilities: [] });
    const { session_id } = hub.startSession(agent_id);
    const prompts: HubPrompt[] = [];
    hub.receivePrompts(
      session_id,
      (prompt) => prompts.push(prompt),
      () => undefined,
    );
    const workPackage = { sequence: 1 } as WorkPackage;
    const running = hub.run(
      { feature_slug: '001-login', work_package: workPackage, context: '', prompt: 'do it', worktree: root, attempt: 1 },
      { kind: 'remote', timeout_ms: 5000, review_cycles: 1 },
      { signal: aborted.signal, onOutput: () => undefined },
    );
    // The session is claimed at once; its prompt goes out after the worktree's HEAD is read.
    assert.deepEqual(hub.heartbeat(session_id), { state: 'busy' }, 'busy, with no task id yet');
    for (const taskId of ['claimed', ''])
      assert.throws(() => hub.reportOutput(session_id, taskId, 'output'), NotFoundError, `output for task ${JSON.stringify(taskId)}`);
    assert.throws(() => hub.completeTask(session_id, 'claimed', { exit_code: 0, pr_url: '' }), NotFoundError);
    // Cancelled before the prompt went out: the agent is never asked, and the session is free again.
    aborted.abort();
    await assert.rejects(running, (error: Error & { code?: string }) => error.code === 'cancelled');
    assert.deepEqual(prompts, []);
    assert.deepEqual(hub.heartbeat(session_id), { state: 'idle' });
  } finally {
    hub.close();
    await rm(root, { recursive: true, force: true });
  }
});

test('a job waiting for a session gets one that starts before it subscribes to its prompts, once it subscribes', async () => {
  const { root } = await tempGitRepo({ prefix: 'hub-', readmeVersions: ['# x\n'] });
  const hub = new AgentHub({ heartbeatIntervalMs: 60_000 });
  const aborted = new AbortController();
  // The job is dispatched first: no session yet.
  const running = hub.run(
    { feature_slug: '001-login', work_package: { sequence: 1 } as WorkPackage, context: '', prompt: 'do it', worktree: root, attempt: 1 },
    { kind: 'remote', timeout_ms: 5000, review_cycles: 1 },
    { signal: aborted.signal, onOutput: () => undefined },
  );
  try {
    const { agent_id } = hub.registerAgent({ name: 'remote-1', agent_type: 'codex', capabilities: [] });
    // StartSession and ReceivePrompts are two calls: the session exists a moment before anything listens on it.
    const { session_id } = hub.startSession(agent_id);
    assert.deepEqual(hub.heartbeat(session_id), { state: 'idle' }, 'not claimed while no one would hear its prompt');
    const prompts: HubPrompt[] = [];
    hub.receivePrompts(
      session_id,
      (prompt) => {
        prompts.push(prompt);
        hub.completeTask(session_id, prompt.task_id, { exit_code: 0, pr_url: 'https://example.invalid/pr/1' });
      },
      () => undefined,
    );
    assert.deepEqual(hub.heartbeat(session_id), { state: 'busy' }, 'claimed as soon as it listens');
    assert.equal((await running).exit_code, 0);
    assert.deepEqual(
      prompts.map((p) => [p.kind, p.prompt]),
      [['task', 'do it']],
    );
  } finally {
    aborted.abort();
    await running.catch(() => undefined);
    hub.close();
    await rm(root, { recursive: true, force: true });
  }
});

test('an agent with no session for three heartbeat intervals is forgotten; one with a live session is kept', () => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const hub = new AgentHub({ clock: { now: () => now }, heartbeatIntervalMs: 1000 });
  try {
    const quiet = hub.registerAgent({ name: 'never-started', agent_type: 'codex', capabilities: [] }).agent_id;
    const ended = hub.registerAgent({ name: 'ended', agent_type: 'codex', capabilities: [] }).agent_id;
    const silent = hub.registerAgent({ name: 'went-silent', agent_type: 'codex', capabilities: [] }).agent_id;
    const working = hub.registerAgent({ name: 'working', agent_type: 'codex', capabilities: [] }).agent_id;
    const silentSession = hub.startSession(silent).session_id;
    const workingSession = hub.startSession(working).session_id;
    now += 2000;
    hub.endSession(hub.startSession(ended).session_id, 'done for now');
    hub.heartbeat(workingSession);
    // 3.5 s after registration: the agent that never started a session is past its grace period, and the
    // one whose session missed its heartbeats since 0 s goes with it.
    now += 1500;
    assert.throws(() => hub.startSession(quiet), NotFoundError, 'never started a session');
    assert.throws(() => hub.heartbeat(silentSession), NotFoundError, 'the silent session expired');
    assert.throws(() => hub.startSession(silent), NotFoundError, 'its agent is forgotten with it');
    // The agent that ended its session at 2 s may still start another within its grace period.
    const again = hub.startSession(ended).session_id;
    hub.endSession(again, '');
    now += 1500;
    hub.heartbeat(workingSession);
    now += 1501;
    assert.throws(() => hub.startSession(ended), NotFoundError, 'ended its session more than three intervals ago');
    hub.heartbeat(workingSession);
    assert.deepEqual(
      hub.listAgents().map((a) => [a.name, a.sessions]),
      [['working', 1]],
      'only the agent whose session keeps its heartbeats is remembered',
    );
  } finally {
    hub.close();
  }
  assert.deepEqual(hub.listAgents(), [], 'close forgets every agent');
});
