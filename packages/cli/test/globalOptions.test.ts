/**
 * Global options given wrong, in-process through `main`: the error names
 * the option and nothing is created on the way.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type TempRepo, tempRepo, yard } from './helpers.js';

let repo: TempRepo;
before(async () => {
  repo = await tempRepo();
});
after(() => repo.cleanup());

test('--db (or YARD_DB) in a directory that does not exist is not_found (exit 3), and no directory or database appears', async () => {
  const missing = join(repo.root, 'no-such-dir', 'nested', 'x.db');
  const viaOption = await yard(['feature', 'list', '--db', missing, '--output', 'json'], { cwd: repo.root });
  assert.equal(viaOption.code, 3, viaOption.stderr);
  assert.deepEqual(JSON.parse(viaOption.stderr).error, {
    code: 'not_found',
    message: `--db: the directory ${join(repo.root, 'no-such-dir', 'nested')} does not exist; create it first or fix the path`,
    details: { field: 'db' },
  });
  const viaEnv = await yard(['feature', 'list'], { cwd: repo.root, env: { YARD_DB: 'typo/x.db' } });
  assert.equal(viaEnv.code, 3);
  assert.match(viaEnv.stderr, /^yard: --db: the directory .*\/typo does not exist/);
  assert.ok(!existsSync(join(repo.root, 'no-such-dir')) && !existsSync(join(repo.root, 'typo')));

  const existing = await yard(['feature', 'list', '--db', 'here.db', '--output', 'json'], { cwd: repo.root });
  assert.equal(existing.code, 0, existing.stderr);
  assert.deepEqual(existing.json(), []);
  assert.ok(existsSync(join(repo.root, 'here.db')), 'a new database in an existing directory is still made');
});

test('outside a git repository without --repo: not_found (exit 3) saying what to do, and no .agileplus/ is planted there', async () => {
  const plain = await mkdtemp(join(tmpdir(), 'yard-not-a-repo-'));
  try {
    const r = await yard(['feature', 'list'], { cwd: plain });
    assert.equal(r.code, 3);
    assert.equal(
      r.stderr,
      `yard: ${plain} is not inside a git repository: run yard in one (git init), or pass --repo <path> (not_found)\n`,
    );
    assert.ok(!existsSync(join(plain, '.agileplus')));
    const explicit = await yard(['feature', 'list', '--repo', repo.root, '--output', 'json'], { cwd: plain });
    assert.equal(explicit.code, 0, explicit.stderr);
  } finally {
    await rm(plain, { recursive: true, force: true });
  }
});

test('--repo (or YARD_REPO) naming a directory that is no git repository: not_found (exit 3), and no .agileplus/ is created there', async () => {
  const plain = await mkdtemp(join(tmpdir(), 'yard-repo-not-git-'));
  try {
    const viaOption = await yard(['feature', 'list', '--repo', plain, '--output', 'json'], { cwd: repo.root });
    assert.equal(viaOption.code, 3, viaOption.stderr);
    assert.deepEqual(JSON.parse(viaOption.stderr).error, {
      code: 'not_found',
      message: `${plain} is not a git repository`,
      details: { field: 'repo', reason: 'not_a_repository' },
    });
    const viaEnv = await yard(['feature', 'list'], { cwd: repo.root, env: { YARD_REPO: plain } });
    assert.equal(viaEnv.code, 3);
    assert.equal(viaEnv.stderr, `yard: ${plain} is not a git repository (not_found)\n`);
    assert.ok(!existsSync(join(plain, '.agileplus')), 'no database or audit log planted in the directory');
  } finally {
    await rm(plain, { recursive: true, force: true });
  }
});

test('--repo (or YARD_REPO) naming a subdirectory of a repository works on the repository: .agileplus/ goes to its top level, never the subdirectory', async () => {
  const fresh = await tempRepo('yard-subdir-');
  try {
    const sub = join(fresh.root, 'src', 'deep');
    await mkdir(sub, { recursive: true });
    const viaOption = await yard(['branch:list', '--repo', sub, '--output', 'json', '-v'], { cwd: tmpdir() });
    assert.equal(viaOption.code, 0, viaOption.stderr);
    assert.ok(viaOption.json<{ name: string }[]>().some((b) => b.name === 'main'));
    assert.equal(viaOption.stderr, `yard: --repo ${sub} is inside the repository ${fresh.root}; using its top level\n`);
    const viaEnv = await yard(['feature', 'list', '--output', 'json'], { cwd: tmpdir(), env: { YARD_REPO: sub } });
    assert.equal(viaEnv.code, 0, viaEnv.stderr);
    assert.equal(viaEnv.stderr, '', 'the note is for -v only');
    assert.ok(existsSync(join(fresh.root, '.agileplus', 'audit.jsonl')), 'the audit log at the top level');
    assert.ok(existsSync(join(fresh.root, '.agileplus', 'agileplus.db')), 'the database at the top level');
    assert.ok(!existsSync(join(fresh.root, 'src', '.agileplus')) && !existsSync(join(sub, '.agileplus')), 'nothing in the subdirectory');
  } finally {
    await fresh.cleanup();
  }
});
