// The workflow's AgentSessionAdapter driving a real bash through the agent
// session server: it waits for stable, posts the task, streams the reply over
// SSE, and collects the commit and PR URL the "agent" produced.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { type AgentSessionServer, startAgentSessionServer } from '@switchyard/agent-session';
import { AgentSessionAdapter } from '@switchyard/workflow';

let server: AgentSessionServer | undefined;
let repo = '';
after(async () => {
  await server?.close();
  if (repo) await rm(repo, { recursive: true, force: true });
});

test('AgentSessionAdapter runs a task on bash behind the agent session server', { timeout: 120_000 }, async () => {
  repo = await realpath(await mkdtemp(join(tmpdir(), 'agent-session-workflow-')));
  const identity = {
    GIT_AUTHOR_NAME: 'Agent',
    GIT_AUTHOR_EMAIL: 'agent@example.invalid',
    GIT_COMMITTER_NAME: 'Agent',
    GIT_COMMITTER_EMAIL: 'agent@example.invalid',
  };
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, ...identity, GIT_CONFIG_NOSYSTEM: '1', HOME: repo } });
  git('init', '--quiet', '--initial-branch=main');
  git('commit', '--quiet', '--allow-empty', '-m', 'initial');

  server = await startAgentSessionServer({
    command: 'bash',
    args: ['--norc', '--noprofile', '-i'],
    cwd: repo,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: repo, PS1: 'agent$ ', GIT_CONFIG_NOSYSTEM: '1', ...identity },
    port: 0,
    stableWindowMs: 500,
  });
  const chunks: string[] = [];
  const adapter = new AgentSessionAdapter({ baseUrl: server.url, pollIntervalMs: 50 });
  const result = await adapter.run(
    {
      feature_slug: '001-demo',
      work_package: {
        id: 1,
        feature_id: 1,
        sequence: 1,
        title: 'Demo',
        state: 'DOING',
        depends_on: [],
        file_scope: [],
        agent_id: null,
        pr_url: null,
        created_at: '',
        updated_at: '',
      },
      context: '',
      prompt: 'echo work > done.txt && git add done.txt && git commit -q -m "agent work" && echo PR_URL=https://code.example/pr/7',
      worktree: repo,
      attempt: 1,
    },
    { kind: 'agent-session', timeout_ms: 60_000, review_cycles: 1 },
    { signal: new AbortController().signal, onOutput: (chunk) => chunks.push(chunk) },
  );
  assert.equal(result.exit_code, 0);
  assert.equal(result.output, 'PR_URL=https://code.example/pr/7', 'the echo of the command is stripped');
  assert.equal(result.pr_url, 'https://code.example/pr/7');
  assert.equal(result.commits.length, 1);
  assert.equal(git('log', '-1', '--format=%s').trim(), 'agent work');
  assert.equal(chunks.join(''), 'PR_URL=https://code.example/pr/7', 'the reply was streamed over SSE');
});
