/**
 * git refusing through `yard`, in-process through `main`: the common states
 * (no repository, local changes in the way) exit with their documented code
 * and a message that says what to do; git's own text is in
 * `details.git_output` (JSON) and shown with `-v`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type TempRepo, tempRepo, yard } from './helpers.js';

let repo: TempRepo;
before(async () => {
  repo = await tempRepo();
});
after(() => repo.cleanup());

interface ErrorBody {
  error: { code: string; message: string; details: Record<string, unknown> };
}

test('--repo naming a directory that is no git repository: exit 3 saying so', async () => {
  const plain = await mkdtemp(join(tmpdir(), 'yard-plain-'));
  try {
    const r = await yard(['branch:list', '--repo', plain, '--output', 'json'], { cwd: repo.root });
    assert.deepEqual([r.code, r.stdout], [3, '']);
    const { error } = JSON.parse(r.stderr) as ErrorBody;
    assert.deepEqual(
      [error.code, error.message, error.details.reason],
      // A hidden subcommand's refusal says that no log could take it (subcommandRefusals.test.ts).
      [
        'not_found',
        `${plain} is not a git repository; not audit-logged: no git repository to hold .agileplus/audit.jsonl`,
        'not_a_repository',
      ],
    );
  } finally {
    await rm(plain, { recursive: true, force: true });
  }
});

test('a checkout that would overwrite local changes: exit 5, what to do, and git text with -v', async () => {
  repo.git('switch', '--quiet', '-c', 'other');
  await writeFile(join(repo.root, 'README.md'), 'changed on other\n');
  repo.git('commit', '--quiet', '-am', 'other');
  repo.git('switch', '--quiet', 'main');
  await writeFile(join(repo.root, 'README.md'), 'uncommitted\n');

  const json = await yard(['branch:checkout', '--name', 'other', '--output', 'json'], { cwd: repo.root });
  assert.deepEqual([json.code, json.stdout], [5, '']);
  const { error } = JSON.parse(json.stderr) as ErrorBody;
  assert.equal(error.code, 'conflict');
  assert.equal(error.message, 'local changes would be overwritten: README.md: commit or stash them first, then retry');
  assert.match(String(error.details.git_output), /Your local changes to the following files would be overwritten by checkout/);

  const quiet = await yard(['branch:checkout', '--name', 'other'], { cwd: repo.root });
  assert.equal(quiet.stderr, `yard: ${error.message} (conflict)\n`);
  const verbose = await yard(['branch:checkout', '--name', 'other', '-v'], { cwd: repo.root });
  assert.match(verbose.stderr, /^yard: local changes .*\(conflict\)\n( {2}git: .*\n)* {2}git: error: Your local changes/);
  assert.equal(repo.git('branch', '--show-current').trim(), 'main');
});
