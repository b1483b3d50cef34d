/**
 * A served agent works in the work package's worktree: `yard implement --agent agent-session
 * --agent-command …` starts the agent session server with the worktree as the agent's working
 * directory, so its commit lands on the package's branch (where the review loop reads it), and
 * the user's checkout is untouched.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type TempRepo, tempRepo, yard } from './helpers.js';

const AGENT = fileURLToPath(new URL('./fixtures/served-agent.mjs', import.meta.url));
const SLUG = '001-served';
let repo: TempRepo | undefined;
after(() => repo?.cleanup());

test('implement starts the agent session server in the worktree; the commit lands on the package branch', {
  timeout: 180_000,
}, async () => {
  repo = await tempRepo('yard-served-');
  await mkdir(join(repo.root, '.agileplus'));
  const check = { name: 'module tests', kind: 'test', run: [process.execPath, '--test', 'test/'] };
  await writeFile(join(repo.root, '.agileplus', 'config.yaml'), `ci:\n  checks:\n    - ${JSON.stringify(check)}\n`);
  const run = async (...args: string[]) => {
    const r = await yard(args, { cwd: repo!.root });
    assert.equal(r.code, 0, `yard ${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
    return r;
  };
  await run('specify', SLUG, '--title', 'Served', '--description', 'An agent behind the session server.');
  await run('plan', SLUG, '--force', '--wp', 'Served module');
  const r = await run('implement', SLUG, '--agent', 'agent-session', '--agent-command', process.execPath, '--agent-arg', AGENT);
  assert.match(r.stderr, /REVIEW -> DONE by reviewer:heuristic/);
  assert.equal(repo.git('log', '-1', '--format=%s', `${SLUG}/wp01`).trim(), 'served wp1');
  assert.equal(repo.git('show', `${SLUG}/wp01:src/served1.mjs`), 'export const served1 = 1;\n');
  assert.ok(!existsSync(join(repo.root, 'src', 'served1.mjs')), "the user's checkout is untouched");
  const jobs = (await run('jobs', 'list', '--feature', SLUG, '--output', 'json')).json<
    { kind: string; state: string; outcome: string; result: { commits: string[] } | null }[]
  >();
  const list = Array.isArray(jobs) ? jobs : (jobs as unknown as { jobs: typeof jobs }).jobs;
  assert.deepEqual([list[0]!.kind, list[0]!.state, list[0]!.outcome], ['agent-session', 'Completed', 'approved']);
  assert.equal(list[0]!.result?.commits.length, 1, 'the review loop saw the commit');
});
