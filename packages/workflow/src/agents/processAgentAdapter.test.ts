import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { eventually } from '@switchyard/test-support';
import { tempRepo } from '../../test/gitFixture.js';
import { doingWorkPackage } from '../../test/helpers.js';
import { WorkflowError } from '../errors.js';
import type { AgentTask } from './agentAdapter.js';
import { ProcessAgentAdapter } from './processAgentAdapter.js';

const OWNER = fileURLToPath(new URL('../../test/fixtures/agentOwnerExits.ts', import.meta.url));
const wp = doingWorkPackage({ sequence: 3, title: 'Wrapper' });
const config = { kind: 'process', timeout_ms: 60_000, review_cycles: 1 };
// The test runner's NODE_OPTIONS (tsx) cannot resolve from the temporary repository.
const env = { NODE_OPTIONS: '' };
const hooks = (signal = new AbortController().signal) => ({ signal, onOutput: () => undefined });

/** Whether `pid` is a process that still runs (a zombie has ended: only its parent's wait is missing). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return existsSync(`/proc/${pid}`);
  }
}

/**
 * An agent as a wrapper: it starts a grandchild and writes its pid to `grandchild.pid` at once; the
 * grandchild ignores TERM (so only a KILL of the group ends it) and then writes `grandchild.ready`.
 * Unless told to exit once the grandchild is ready, the wrapper waits forever itself.
 */
function wrapperAgent(exitWhenReady: boolean): string[] {
  const grandchild = `process.on('SIGTERM', () => {}); require('node:fs').writeFileSync('grandchild.ready', ''); setInterval(() => {}, 1000);`;
  const wrapper = `
    const { spawn } = require('node:child_process');
    const fs = require('node:fs');
    const child = spawn(process.execPath, ['-e', ${JSON.stringify(grandchild)}], { stdio: 'ignore' });
    fs.writeFileSync('agent.pid', String(process.pid));
    fs.writeFileSync('grandchild.pid', String(child.pid));
    const ready = setInterval(() => {
      if (!fs.existsSync('grandchild.ready')) return;
      clearInterval(ready);
      console.log('grandchild ready');
      if (${exitWhenReady}) process.exit(0);
    }, 10);
    setInterval(() => {}, 1000);`;
  return ['-e', wrapper];
}

describe('process agent: the whole process group and the given environment', () => {
  let repo: Awaited<ReturnType<typeof tempRepo>>;
  let task: AgentTask;
  const leftovers: number[] = [];
  before(async () => {
    repo = await tempRepo();
    task = { feature_slug: '002-wrap', work_package: wp, context: '', prompt: 'Wrap', worktree: repo.root, attempt: 1 };
  });
  after(async () => {
    // A failing run must not leave its grandchildren behind on the test machine.
    for (const pid of leftovers) if (running(pid)) process.kill(pid, 'SIGKILL');
    await repo.cleanup();
  });

  /** The grandchild's pid, once the agent has started it. */
  async function grandchildPid(): Promise<number> {
    const file = join(repo.root, 'grandchild.pid');
    await eventually('the agent to start its grandchild', () => existsSync(file) && readFileSync(file, 'utf8').length > 0);
    const pid = Number(readFileSync(file, 'utf8'));
    leftovers.push(pid, Number(readFileSync(join(repo.root, 'agent.pid'), 'utf8')));
    return pid;
  }

  const ready = () => existsSync(join(repo.root, 'grandchild.ready'));

  async function fresh(): Promise<void> {
    for (const name of ['agent.pid', 'grandchild.pid', 'grandchild.ready']) await rm(join(repo.root, name), { force: true });
  }

  test('a cancellation stops the grandchild the agent started, even one that ignores TERM', async () => {
    await fresh();
    const agent = new ProcessAgentAdapter({ command: process.execPath, args: wrapperAgent(false), killGraceMs: 200, env });
    const controller = new AbortController();
    const run = agent.run(task, config, hooks(controller.signal));
    const pid = await grandchildPid();
    await eventually('the grandchild to ignore TERM', ready);
    assert.ok(running(pid), 'the grandchild runs while the agent does');
    controller.abort();
    await assert.rejects(run, (e: unknown) => e instanceof WorkflowError && e.code === 'cancelled');
    await eventually(`grandchild ${pid} to be gone`, () => !running(pid));
  });

  test('a timeout stops the grandchild too', async () => {
    await fresh();
    const agent = new ProcessAgentAdapter({ command: process.execPath, args: wrapperAgent(false), killGraceMs: 200, env });
    const run = agent.run(task, { ...config, timeout_ms: 3000 }, hooks());
    const pid = await grandchildPid();
    await assert.rejects(run, (e: unknown) => e instanceof WorkflowError && e.code === 'timeout');
    await eventually(`grandchild ${pid} to be gone`, () => !running(pid));
  });

  test('an agent that exits leaves nothing running behind it', async () => {
    await fresh();
    const agent = new ProcessAgentAdapter({ command: process.execPath, args: wrapperAgent(true), killGraceMs: 200, env });
    const result = await agent.run(task, config, hooks());
    assert.equal(result.exit_code, 0);
    assert.match(result.output, /grandchild ready/);
    const pid = Number(readFileSync(join(repo.root, 'grandchild.pid'), 'utf8'));
    leftovers.push(pid);
    await eventually(`grandchild ${pid} to be gone`, () => !running(pid));
  });

  test('the process running the agent exits: the agent and its grandchild go with it', async () => {
    await fresh();
    const owner = spawn(
      process.execPath,
      ['--conditions=@switchyard/source', '--import=tsx', OWNER, repo.root, process.execPath, ...wrapperAgent(false)],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    const exited = new Promise<number | null>((resolve) => owner.once('exit', resolve));
    const pid = await grandchildPid();
    assert.equal(await exited, 0);
    await eventually(`grandchild ${pid} to be gone`, () => !running(pid));
  });

  test('baseEnv is the whole environment: a variable only in process.env does not reach the agent', async () => {
    process.env.SWITCHYARD_TEST_ONLY_IN_PROCESS = 'leaked';
    try {
      const script = `process.stdout.write(JSON.stringify({ given: process.env.ONLY_IN_GIVEN, process: process.env.SWITCHYARD_TEST_ONLY_IN_PROCESS, extra: process.env.EXTRA, slug: process.env.SWITCHYARD_FEATURE_SLUG }))`;
      const agent = new ProcessAgentAdapter({
        command: process.execPath,
        args: ['-e', script],
        baseEnv: { ONLY_IN_GIVEN: 'given', PATH: process.env.PATH },
        env: { EXTRA: 'extra' },
      });
      const result = await agent.run(task, config, hooks());
      assert.deepEqual(JSON.parse(result.output), { given: 'given', extra: 'extra', slug: '002-wrap' });
      // Without a baseEnv the agent starts from this process's environment, as before.
      const inherited = await new ProcessAgentAdapter({ command: process.execPath, args: ['-e', script], env }).run(task, config, hooks());
      assert.equal(JSON.parse(inherited.output).process, 'leaked');
    } finally {
      delete process.env.SWITCHYARD_TEST_ONLY_IN_PROCESS;
    }
  });
});
