/**
 * `yard implement --agent-type codex`: the work package's agent runs behind an agent session server
 * of its own, started in the package's worktree, with the type given. The "codex" here is a
 * stand-in terminal agent (fakeTerminalAgent.mjs, on PATH as `codex`): the usual command of the
 * type is what runs when `--agent-command` says nothing else. Bad combinations are usage errors.
 */
import assert from 'node:assert/strict';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type TempRepo, tempRepo, yard, yardJson } from './helpers.js';

const FAKE_AGENT = fileURLToPath(new URL('./fakeTerminalAgent.mjs', import.meta.url));
const SLUG = '001-typed';
let repo: TempRepo;
let bin: string;
const json = yardJson(() => repo.root);

before(async () => {
  repo = await tempRepo('yard-agent-type-');
  await writeFile(join(repo.root, 'yard.yaml'), 'admins: ["Test User"]\n');
  await json('specify', SLUG, '--title', 'Typed agent', '--description', 'Run codex behind the session server.');
  // No CI in this repository: an admin turns the CI gate off for this feature, as a team without CI would.
  await json('governance:enforce', '--feature-slug', SLUG, '--rule', 'wp-ci-before-review', '--action', 'disable', '--config', 'yard.yaml');
  await json('plan', SLUG, '--force', '--wp', 'Form');
  bin = join(repo.root, '..', `${SLUG}-bin`);
  await mkdir(bin, { recursive: true });
  await writeFile(join(bin, 'codex'), `#!/bin/sh\nexec "${process.execPath}" "${FAKE_AGENT}" "$@"\n`);
  await chmod(join(bin, 'codex'), 0o755);
});
after(() => repo.cleanup());

test('--agent-type codex runs `codex` behind an agent session server in the worktree; the package ends DONE', {
  timeout: 180_000,
}, async () => {
  const r = await yard(['implement', SLUG, '--agent-type', 'codex', '--max-review-cycles', '1', '--config', 'yard.yaml'], {
    cwd: repo.root,
    env: { PATH: `${bin}${delimiter}${process.env.PATH ?? '/usr/bin:/bin'}` },
  });
  assert.equal(r.code, 0, r.stderr);
  const server = /\[001-typed\] codex \(type codex\) behind the agent session server at (http:\/\/127\.0\.0\.1:\d+), in (\S+)/.exec(
    r.stderr,
  );
  assert.ok(server, `the server line: ${r.stderr}`);
  const worktree = server[2]!;
  assert.match(
    await readFile(join(worktree, 'agent-work.txt'), 'utf8'),
    new RegExp(`^turn 1 in ${worktree.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`),
  );
  assert.match(r.stderr, /\[001-typed wp1\] REVIEW -> DONE/);
  const wp = (await json<{ state: string; pr_url: string | null }[]>('wp', 'list', SLUG))[0]!;
  assert.deepEqual([wp.state, wp.pr_url], ['DONE', 'https://example.invalid/pr/1']);
  const jobs = await json<{ id: string; state: string }[]>('jobs', 'list', '--feature', SLUG);
  const shown = await json<{ result: { commits: string[] } }>('jobs', 'show', jobs[0]!.id);
  assert.equal(shown.result.commits.length, 1, 'the commit the agent made in the worktree is the job result');
  // The run's server is gone with the run.
  await assert.rejects(fetch(`${server[1]}/status`));
});

test('--agent-type refuses an unknown type, --agent process and --agent-url (usage errors, exit 2)', async () => {
  const unknown = await yard(['implement', SLUG, '--agent-type', 'vim'], { cwd: repo.root });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /--agent-type: expected one of claude, codex, gemini/);
  const processKind = await yard(['implement', SLUG, '--agent-type', 'codex', '--agent', 'process'], { cwd: repo.root });
  assert.equal(processKind.code, 2);
  assert.match(processKind.stderr, /cannot be combined with --agent process/);
  const withUrl = await yard(['implement', SLUG, '--agent-type', 'codex', '--agent-url', 'http://127.0.0.1:1'], { cwd: repo.root });
  assert.equal(withUrl.code, 2);
  assert.match(withUrl.stderr, /drop --agent-url/);
});
