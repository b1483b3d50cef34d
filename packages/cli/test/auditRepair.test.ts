/**
 * A torn `.agileplus/audit.jsonl` (a crash mid-write) through `yard`: every
 * command that writes the log names `yard audit repair` (not the
 * `audit-chain` bin, which `yard` users do not have), and `yard audit
 * repair` fixes it and records that it did, or that it failed, when the
 * log can take the line. In-process through `main`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { auditLines, type TempRepo, tempRepo, yard } from './helpers.js';

let repo: TempRepo;
const run = (...args: string[]) => yard(args, { cwd: repo.root });

before(async () => {
  repo = await tempRepo();
});
after(() => repo.cleanup());

test('a torn audit log: the error names `yard audit repair`, which fixes it and is recorded', async () => {
  assert.equal((await run('branch:list', '--output', 'json')).code, 0);
  await writeFile(join(repo.root, '.agileplus', 'audit.jsonl'), '{"actor":"crashed mid-wr', { flag: 'a' });

  const envelope = JSON.stringify({ command: 'dispatch_command', args: { command: 'branch:list' } });
  for (const args of [['branch:list'], ['dispatch', envelope]]) {
    const refused = await run(...args, '--output', 'json');
    assert.equal(refused.code, 1, args[0]);
    const { error } = JSON.parse(refused.stderr) as { error: { code: string; message: string; details: { fix: string } } };
    assert.equal(error.code, 'audit_log_torn');
    assert.match(error.message, /\.agileplus\/audit\.jsonl ends with an incomplete line.*`yard audit repair`/);
    assert.doesNotMatch(error.message, /audit-chain repair/);
    assert.equal(error.details.fix, 'yard audit repair');
  }
  const plain = await run('branch:list');
  assert.match(plain.stderr, /^yard: .*run `yard audit repair`, then retry \(audit_log_torn\)\n$/);

  const repaired = await run('audit', 'repair', '--output', 'json');
  assert.equal(repaired.code, 0, repaired.stderr);
  assert.deepEqual(repaired.json(), {
    path: '.agileplus/audit.jsonl',
    action: 'truncated',
    removed_bytes: '{"actor":"crashed mid-wr'.length,
    message: `removed ${'{"actor":"crashed mid-wr'.length} bytes of an incomplete last line`,
    audit_id: 2,
  });
  assert.equal((await run('branch:list', '--output', 'json')).code, 0);
  const again = await run('audit', 'repair');
  assert.equal(again.code, 0);
  assert.match(again.stdout, /^\.agileplus\/audit\.jsonl: nothing to repair/);

  const lines = await auditLines(repo.root);
  assert.deepEqual(
    lines.map((l) => [l.command, l.actor === 'Test User', l.result]),
    [
      ['branch:list', true, undefined],
      ['audit repair', true, { action: 'truncated', removed_bytes: 24 }],
      ['branch:list', true, undefined],
      ['audit repair', true, { action: 'none', removed_bytes: 0 }],
    ],
  );
});

test('`yard --help` lists `audit repair`; it takes no arguments', async () => {
  const help = await run('--help');
  assert.match(help.stdout, /^ {2}audit\s+The subcommand audit log/m);
  const extra = await run('audit', 'repair', 'somefile');
  assert.equal(extra.code, 2);
  assert.match(extra.stderr, /too many arguments/);
});

test('a repair that fails on a lock another writer holds is recorded once the log is free', async () => {
  assert.equal((await run('branch:list')).code, 0);
  const lock = join(repo.root, '.agileplus', 'audit.jsonl.lock');
  // A live process (this one) holds the writers' lock: the repair waits its 10 s and gives up.
  await writeFile(lock, `${process.pid} held-by-the-test ${Date.now()}\n`);
  // The other writer finishes after the repair gave up (about 10 s in) and well before the
  // failure's own 10 s wait for the lock ends.
  const release = setTimeout(() => unlink(lock), 14_000);
  try {
    const failed = await run('audit', 'repair', '--output', 'json');
    assert.deepEqual([failed.code, failed.stdout], [1, '']);
    assert.match(JSON.parse(failed.stderr).error.message, /timed out after 10000 ms waiting for the lock/);
  } finally {
    clearTimeout(release);
    await unlink(lock).catch(() => undefined);
  }
  const last = (await auditLines(repo.root)).at(-1)!;
  assert.equal(last.command, 'audit repair');
  assert.equal(last.exit_code, 1);
  assert.equal(last.actor, 'Test User');
  const { error } = last.result as { error: { code: string; message: string } };
  assert.equal(error.code, 'internal');
  assert.match(error.message, /timed out .* waiting for the lock/);
});

test('a log that leads outside the repository: repair and every writer refuse it (exit 2), nothing is written there', async () => {
  const local = await tempRepo();
  const outside = await mkdtemp(join(tmpdir(), 'yard-outside-'));
  try {
    assert.equal((await yard(['branch:list'], { cwd: local.root })).code, 0);
    const victim = join(outside, 'audit.jsonl');
    await writeFile(victim, 'not yours\n');
    const log = join(local.root, '.agileplus', 'audit.jsonl');
    await unlink(log);
    await symlink(victim, log);
    for (const args of [['audit', 'repair'], ['branch:list']]) {
      const r = await yard([...args, '--output', 'json'], { cwd: local.root });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(JSON.parse(r.stderr).error.code, 'path_escape');
    }
    assert.equal(await readFile(victim, 'utf8'), 'not yours\n', 'the file outside is untouched');
  } finally {
    await local.cleanup();
    await rm(outside, { recursive: true, force: true });
  }
});
