import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { SUBCOMMAND_LOG_PATH, SubcommandAuditLog } from './subcommandAuditLog.js';

const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'subcommand-log-'));
  dirs.push(dir);
  return dir;
}

const record = (command: string) => ({ command, args: {}, actor: 'alice', exit_code: 0, duration_ms: 1 });

test('repair fixes a torn last line so the log opens again, keeps every complete entry, and the chain still verifies', async () => {
  const root = await tempDir();
  const log = await SubcommandAuditLog.open(root, { repoName: 'demo' });
  await log.record(record('branch:list'));
  await log.record(record('stash:list'));
  await log.close();
  await writeFile(join(root, SUBCOMMAND_LOG_PATH), '{"actor":"bob","comm', { flag: 'a' });
  await assert.rejects(SubcommandAuditLog.open(root, { repoName: 'demo' }), { code: 'TORN_TAIL' });

  const repaired = await SubcommandAuditLog.repair(root, { repoName: 'demo' });
  assert.deepEqual([repaired.action, repaired.removed_bytes], ['truncated', '{"actor":"bob","comm'.length]);

  const reopened = await SubcommandAuditLog.open(root, { repoName: 'demo' });
  try {
    const entry = await reopened.record({ ...record('audit repair'), result: { action: repaired.action } });
    assert.deepEqual([entry.id, entry.result], [3, { action: 'truncated' }]);
    assert.deepEqual(
      (await reopened.tail()).map((e) => e.command),
      ['branch:list', 'stash:list', 'audit repair'],
    );
    assert.equal((await reopened.verify()).valid, true);
  } finally {
    await reopened.close();
  }
  assert.equal((await SubcommandAuditLog.repair(root, { repoName: 'demo' })).action, 'none');
});

test('repair of a repository without a log changes nothing; one whose log leads outside it is refused', async () => {
  const root = await tempDir();
  assert.equal((await SubcommandAuditLog.repair(root)).action, 'none');
  await assert.rejects(readFile(join(root, SUBCOMMAND_LOG_PATH)), { code: 'ENOENT' });

  const outside = await tempDir();
  const victim = join(outside, 'audit.jsonl');
  await writeFile(victim, 'line one\nnot an entry, no newline');
  await mkdir(join(root, '.agileplus'));
  await symlink(victim, join(root, SUBCOMMAND_LOG_PATH));
  await assert.rejects(SubcommandAuditLog.repair(root), { code: 'path_escape' });
  await assert.rejects(SubcommandAuditLog.open(root), { code: 'path_escape' }, 'writers refuse it too');
  assert.equal(await readFile(victim, 'utf8'), 'line one\nnot an entry, no newline', 'the file outside is untouched');
});

test('a log that is a dangling symlink out of the repository is refused, and nothing is created where it points', async () => {
  const root = await tempDir();
  const outside = await tempDir();
  const victim = join(outside, 'planted.jsonl');
  await mkdir(join(root, '.agileplus'));
  await symlink(victim, join(root, SUBCOMMAND_LOG_PATH));
  await assert.rejects(SubcommandAuditLog.open(root), { code: 'path_escape' });
  await assert.rejects(SubcommandAuditLog.repair(root), { code: 'path_escape' });
  await assert.rejects(readFile(victim), { code: 'ENOENT' }, 'no file appears outside the repository');
});

test('a log directory or log swapped for a symlink out of the repository after the check: open and repair refuse, nothing outside changes', async () => {
  const root = await tempDir();
  const outside = await tempDir();
  const victim = join(outside, 'audit.jsonl');
  await writeFile(victim, 'line one\nnot an entry, no newline');
  const log = await SubcommandAuditLog.open(root, { repoName: 'demo' });
  await log.record(record('branch:list'));
  await log.close();

  // Between the path check and the open, `.agileplus/` becomes a link to a directory outside.
  const swapDirectory = async () => {
    await rename(join(root, '.agileplus'), join(root, '.agileplus-moved'));
    await symlink(outside, join(root, '.agileplus'));
  };
  await assert.rejects(SubcommandAuditLog.open(root, { repoName: 'demo', beforeOpen: swapDirectory }), { code: 'path_escape' });
  await assert.rejects(SubcommandAuditLog.repair(root, { repoName: 'demo' }), { code: 'path_escape' });
  await rm(join(root, '.agileplus'));
  await rename(join(root, '.agileplus-moved'), join(root, '.agileplus'));

  // Between the check and the open, the log itself becomes a link to a torn file outside: repair would truncate it.
  const swapLog = async () => {
    await rename(join(root, SUBCOMMAND_LOG_PATH), join(root, '.agileplus', 'kept.jsonl'));
    await symlink(victim, join(root, SUBCOMMAND_LOG_PATH));
  };
  await assert.rejects(SubcommandAuditLog.repair(root, { repoName: 'demo', beforeOpen: swapLog }), {
    code: 'path_escape',
    message: /is a symlink/,
  });
  assert.equal(await readFile(victim, 'utf8'), 'line one\nnot an entry, no newline', 'the file outside is untouched');
  assert.deepEqual(await readdir(outside), ['audit.jsonl'], 'no line, lock or file lands outside');
});
