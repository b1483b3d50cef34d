/**
 * @module implementWithAgent
 * The setting of the `yard implement` test with a real coding agent: a
 * repository that `yard init` has configured (its `npm test` the local CI
 * command) with one planned work package, the agent configured as the
 * process agent (the CLI run headless, its task on stdin), a scripted model
 * behind the gateway, and `yard implement` run as a process of its own in
 * its own process group, with HOME, XDG and the agent's config in a
 * temporary directory. The script plays two review cycles: the module
 * first, then, once the review loop asks for one, its test.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '@switchyard/cli';
import type { Gateway } from '@switchyard/server-http';
import { type AgentCliName, requireAgentCli, workspaceProgram } from '@switchyard/test-support';
import { CLI_SETUPS, commonEnv, HEADLESS_RUNS } from './cliSetups.js';
import { killGroup, killProgramsUnder } from './leftovers.js';
import { startScriptedGateway } from './scriptedGateway.js';
import { type ModelAnswer, type ModelRequest, type ScriptedModel, startScriptedModel } from './scriptedModel.js';

export const SLUG = '001-greeting';
export const BRANCH = `${SLUG}/wp01`;
export const WORKTREE = `.worktrees/${SLUG}-wp01`;
/** The name the agent commits under (the repository's own identity is Alice's). */
export const AGENT_AUTHOR = 'Coding Agent';
/** How long one agent run may take before the process agent stops it (a hang is a failure). */
const AGENT_RUN_LIMIT_MS = 240_000;
/** How long `yard implement` may run before its process group is killed. */
const IMPLEMENT_LIMIT_MS = 560_000;

const YARD = workspaceProgram(fileURLToPath(new URL('../../packages/cli/src/bin.ts', import.meta.url)));

const commit = (message: string) =>
  `git add -A && git -c user.name='${AGENT_AUTHOR}' -c user.email=agent@example.invalid commit -q -m '${message}'`;
/** The first cycle's shell command: the module alone. */
export const WRITE_MODULE = `mkdir -p src && printf '%s\\n' "export const greet = (name) => 'Hello, ' + name;" > src/greet.mjs && ${commit('wp01: greet by name')}`;
/** The second cycle's: the test the review loop asked for. */
export const WRITE_TEST = `printf '%s\\n' "import assert from 'node:assert/strict';" "import test from 'node:test';" "import { greet } from '../src/greet.mjs';" "test('greet', () => assert.equal(greet('Ada'), 'Hello, Ada'));" > test/greet.test.mjs && ${commit('wp01: test greet')}`;
export const FINAL_TEXT = 'Done: the change is committed.';

type Json = Record<string, unknown>;
const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : '')).join('\n')
      : '';
/** Everything the users' turns say (the task yard wrote on stdin is one of them). */
const userText = (body: Json) =>
  ((body.messages ?? []) as Json[])
    .filter((m) => m.role === 'user')
    .map((m) => textOf(m.content))
    .join('\n');
/** Tool results in the conversation: each run of the agent calls the tool once. */
export const toolResults = (body: Json) => ((body.messages ?? []) as Json[]).filter((m) => m.role === 'tool').map((m) => textOf(m.content));

/** The scripted model's answers for the CLI whose shell tool is `tool`. */
function script(name: AgentCliName) {
  const run = HEADLESS_RUNS[name]!;
  return (request: ModelRequest): ModelAnswer => {
    // A side request (a title, a summary) offers no tools.
    if (!request.tools.includes(run.tool)) return { text: 'OK' };
    if (toolResults(request.body).length > 0) return { text: FINAL_TEXT };
    const task = userText(request.body);
    if (!task.includes(`Work package 1 of feature ${SLUG}`)) return { text: 'There is no task here.' };
    // Cycle 2's task carries the review loop's feedback on cycle 1.
    return { tool: run.tool, args: run.call(task.includes('no test was added') ? WRITE_TEST : WRITE_MODULE) };
  };
}

export interface YardRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface ImplementSetting {
  root: string;
  model: ScriptedModel;
  gateway: Gateway;
  /** `yard implement <slug>` with the configured agent, as a process; its group is killed when it ends. */
  implement(): Promise<YardRun>;
  stop(): Promise<void>;
}

/** `yard` in-process (the steps before implement), failing with its output. */
async function yardHere(root: string, env: Record<string, string>, args: string[]): Promise<string> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    readStdin: async () => Buffer.alloc(0),
    stdinIsTTY: false,
    env,
    cwd: root,
  });
  if (code !== 0) throw new Error(`yard ${args.join(' ')} exited ${code}\n${stdout}\n${stderr}`);
  return stdout;
}

const SPEC = `# Greetings

Greet people by name.

## Tasks

- [ ] Greet by name (files: src/greet.mjs, test/greet.test.mjs)
`;

/** Prepares everything up to `yard implement` for the CLI `name` (installed: check `requireAgentCli(name).skip`). */
export async function prepareImplement(name: AgentCliName): Promise<ImplementSetting> {
  const cli = requireAgentCli(name);
  if (!cli.available) throw new Error(cli.skip);
  const dir = await realpath(await mkdtemp(join(tmpdir(), `implement-${name}-`)));
  const home = join(dir, 'home');
  const root = join(dir, 'shop');
  await mkdir(home, { recursive: true });
  await mkdir(join(root, 'test'), { recursive: true });
  const model = await startScriptedModel(script(name));
  const gateway = await startScriptedGateway(model.url, join(dir, 'auths'));
  const stop = async () => {
    killProgramsUnder(dir);
    await gateway.close().catch(() => undefined);
    await model.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  };
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' });
    git('init', '--quiet', '--initial-branch=main');
    git('config', 'user.name', 'Alice');
    git('config', 'user.email', 'alice@example.invalid');
    git('config', 'commit.gpgsign', 'false');
    await writeFile(
      join(root, 'package.json'),
      `${JSON.stringify({ name: 'shop', private: true, type: 'module', scripts: { test: 'node --test test/' } }, null, 2)}\n`,
    );
    await writeFile(join(root, 'test', 'smoke.test.mjs'), "import test from 'node:test';\n\ntest('the shop starts', () => {});\n");
    await writeFile(join(root, 'spec.md'), SPEC);
    git('add', '-A');
    git('commit', '--quiet', '-m', 'start');

    // The agent as its own CLI reads it: config in the temporary HOME, the gateway its only endpoint.
    const place = {
      gatewayUrl: gateway.url,
      home,
      workdir: join(root, WORKTREE),
      trusted: true,
      emptyRegistry: model.url.replace(/\/v1$/u, '/npm/'),
    };
    const setup = CLI_SETUPS[name](place);
    await setup.prepare(place);
    const env = { ...commonEnv(home), ...setup.env, YARD_ACTOR: 'alice' };

    await yardHere(root, env, ['init']);
    const [command, ...launcher] = cli.command;
    const agent = { kind: 'process', command, args: [...launcher, ...HEADLESS_RUNS[name]!.args], timeout_ms: AGENT_RUN_LIMIT_MS };
    const configPath = join(root, '.agileplus', 'config.yaml');
    await writeFile(configPath, `agent: ${JSON.stringify(agent)}\n`, { flag: 'a' });
    await yardHere(root, env, ['specify', SLUG, '--title', 'Greetings', '--from-file', 'spec.md']);
    await yardHere(root, env, ['research', SLUG]);
    await yardHere(root, env, ['plan', SLUG]);

    const implement = () => runYard(['implement', SLUG, '-v'], root, { ...env, NODE_OPTIONS: YARD.env.NODE_OPTIONS });
    return { root, model, gateway, implement, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Runs `yard <args>` in its own process group; the group (the agent's helpers with it) is killed when yard ends or overruns. */
function runYard(args: string[], cwd: string, env: Record<string, string>): Promise<YardRun> {
  const child = spawn(process.execPath, [...YARD.args, ...args], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString('utf8');
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
  });
  const timer = setTimeout(() => killGroup(child.pid), IMPLEMENT_LIMIT_MS);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      killGroup(child.pid);
      resolve({ code, stdout, stderr });
    });
  });
}
