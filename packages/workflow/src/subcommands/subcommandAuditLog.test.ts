import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { acquireFileLock } from '@switchyard/audit-chain';
import { DispatchTool } from './dispatchTool.js';
import { EXIT_CODES } from './exitCodes.js';
import { BUILTIN_SUBCOMMANDS } from './index.js';
import { type SubcommandContext, SubcommandRegistry } from './registry.js';
import { runSubcommand } from './runSubcommand.js';
import {
  MAX_LOGGED_CHARS,
  MAX_LOGGED_DEPTH,
  SUBCOMMAND_INTENT_PATH,
  SUBCOMMAND_LOG_PATH,
  SubcommandAuditLog,
  sanitizeArgs,
} from './subcommandAuditLog.js';

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

/** A value nested `depth` arrays deep. */
function deepArray(depth: number): unknown {
  let value: unknown = [];
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

async function logLines(root: string): Promise<Record<string, unknown>[]> {
  return (await readFile(join(root, SUBCOMMAND_LOG_PATH), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

test('a refused call whose unknown key holds a 5,000-deep array leaves exactly one record, with its refusal and no unchecked arguments', async () => {
  const root = await tempDir();
  const log = await SubcommandAuditLog.open(root, { repoName: 'demo' });
  const registry = new SubcommandRegistry(BUILTIN_SUBCOMMANDS);
  // Refused before any handler runs: the context is never used.
  const tool = new DispatchTool({ registry, log, context: { actor: 'alice' } as SubcommandContext });
  try {
    const direct = await runSubcommand(registry, log, 'branch:list', { evil: deepArray(5_000) }, { actor: 'alice' } as SubcommandContext);
    assert.equal(direct.exit_code, EXIT_CODES.usage);
    // Written by hand: JSON.stringify itself overflows the stack on it.
    const envelope = `{"command":"dispatch_command","args":{"command":"branch:list","evil":${'['.repeat(5_000)}${']'.repeat(5_000)}}}`;
    const dispatched = await tool.dispatch(envelope);
    assert.equal(dispatched.exit_code, EXIT_CODES.usage);
    const lines = await logLines(root);
    assert.equal(lines.length, 2, 'one record per refused call');
    for (const line of lines) {
      assert.equal(line.command, 'branch:list');
      assert.deepEqual(line.args, {});
      assert.equal((line.result as { error: { code: string } }).error.code, 'invalid_argument');
    }
    assert.equal((await log.verify()).valid, true);
  } finally {
    await log.close();
  }
});

test('logged arguments are bounded in depth, breadth and size', () => {
  const clean = sanitizeArgs({
    deep: deepArray(5_000),
    wide: Array.from({ length: 10_000 }, (_, i) => i),
    big: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, 'v'.repeat(500)])),
  });
  assert.ok(JSON.stringify(clean).length < MAX_LOGGED_CHARS * 2, 'the whole stays near the budget');
  let depth = 0;
  for (let v: unknown = clean.deep; Array.isArray(v); v = v[0]) depth++;
  assert.ok(depth <= MAX_LOGGED_DEPTH, `nesting kept: ${depth}`);
  assert.equal((clean.wide as unknown[]).length, 65, '64 items and a count of the rest');
});

/** Starts the intent-journal child and resolves with it once it printed `until`. */
function child(root: string, mode: 'kill' | 'timeout', until: RegExp): Promise<{ proc: ChildProcess; said: string }> {
  const proc = spawn(process.execPath, ['--conditions=@switchyard/source', '--import=tsx', intentWriter, root, mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let said = '';
    proc.stdout!.on('data', (chunk: Buffer) => {
      said += chunk.toString('utf8');
      if (until.test(said)) resolve({ proc, said });
    });
    proc.once('exit', (code) => {
      if (!until.test(said)) reject(new Error(`the child exited (${code}) saying ${JSON.stringify(said)}`));
    });
  });
}

const intentWriter = fileURLToPath(new URL('../../test/fixtures/intentWriter.ts', import.meta.url));

test('a run killed between its intent and its record is recorded at the next start, as interrupted, and verify flags it', {
  timeout: 60_000,
}, async () => {
  const root = await tempDir();
  const { proc } = await child(root, 'kill', /ready\n/);
  // While its writer lives, an intent is a run in progress: another start leaves it alone.
  await (await SubcommandAuditLog.open(root, { repoName: 'demo' })).close();
  assert.equal((await readFile(join(root, SUBCOMMAND_LOG_PATH), 'utf8')).length, 0, 'a live run is not recovered');
  const exited = once(proc, 'exit');
  proc.kill('SIGKILL');
  await exited;
  assert.equal((await readFile(join(root, SUBCOMMAND_LOG_PATH), 'utf8')).length, 0, 'killed before its record');

  const log = await SubcommandAuditLog.open(root, { repoName: 'demo' });
  try {
    const lines = await logLines(root);
    assert.equal(lines.length, 1, 'exactly one record for the killed run');
    const [line] = lines as [Record<string, unknown>];
    assert.deepEqual(
      [line.command, line.args, line.actor, line.exit_code],
      ['branch:create', { name: 'topic' }, 'alice', EXIT_CODES.internal],
    );
    const result = line.result as { error: { code: string }; recovered: { outcome_recorded: boolean } };
    assert.equal(result.error.code, 'interrupted');
    assert.equal(result.recovered.outcome_recorded, false);
    const verified = await log.verify();
    assert.equal(verified.valid, true, 'the chain itself is intact');
    assert.deepEqual(
      verified.recovered.map((r) => [r.id, r.command, r.intent, r.outcome_recorded]),
      [[1, 'branch:create', line.intent, false]],
    );
    await assert.rejects(readFile(join(root, SUBCOMMAND_INTENT_PATH)), { code: 'ENOENT' }, 'the resolved intent leaves the journal');
  } finally {
    await log.close();
  }
  const again = await SubcommandAuditLog.open(root, { repoName: 'demo' });
  await again.close();
  assert.equal((await logLines(root)).length, 1, 'a second start recovers nothing twice');
});

test('a lock timeout after a successful run leaves its outcome journalled, and the next start records it', {
  timeout: 60_000,
}, async () => {
  const root = await tempDir();
  const { proc, said } = await child(root, 'timeout', /(timed-out|appended).*\n/);
  await once(proc, 'exit').catch(() => undefined);
  assert.match(said, /timed-out LOCK_TIMEOUT/);
  assert.equal((await readFile(join(root, SUBCOMMAND_LOG_PATH), 'utf8')).length, 0);

  // The child's lock is stale now (its process is gone) and is broken; its run is recorded with its outcome.
  const log = await SubcommandAuditLog.open(root, { repoName: 'demo' });
  try {
    const lines = await logLines(root);
    assert.equal(lines.length, 1);
    assert.deepEqual([lines[0]!.command, lines[0]!.exit_code, lines[0]!.duration_ms], ['branch:create', 0, 7]);
    assert.deepEqual(
      (await log.verify()).recovered.map((r) => r.outcome_recorded),
      [true],
    );
  } finally {
    await log.close();
  }
});

test('in one process, a record whose append timed out is retried before the next one', async () => {
  const root = await tempDir();
  const log = await SubcommandAuditLog.open(root, { repoName: 'demo', lockTimeoutMs: 50 });
  try {
    const intent = await log.begin({ command: 'stash:list', args: {}, actor: 'alice' });
    const release = await acquireFileLock(`${log.path}.lock`);
    await assert.rejects(log.finish(intent, { exit_code: 0, duration_ms: 1 }), { code: 'LOCK_TIMEOUT' });
    await release();
    await log.record(record('branch:list'));
    assert.deepEqual(
      (await logLines(root)).map((l) => [l.command, l.intent ?? null]),
      [
        ['stash:list', intent.id],
        ['branch:list', null],
      ],
    );
  } finally {
    await log.close();
  }
});

test('a log kept open (yard serve) compacts its intent journal as it goes', async () => {
  const root = await tempDir();
  const log = await SubcommandAuditLog.open(root, { repoName: 'demo' });
  try {
    for (let i = 0; i < 70; i++) {
      const intent = await log.begin({ command: 'branch:list', args: { n: i }, actor: 'alice' });
      await log.finish(intent, { exit_code: 0, duration_ms: 1 });
    }
    const journal = (await readFile(join(root, SUBCOMMAND_INTENT_PATH), 'utf8')).split('\n').filter(Boolean);
    assert.ok(journal.length <= 2 * 6, `${journal.length} journal lines after 70 runs: the first 64 runs' were dropped`);
    assert.equal((await logLines(root)).length, 70);
  } finally {
    await log.close();
  }
});

test('a run that records itself and exits while another process starts is recorded once, not also recovered', async () => {
  const root = await tempDir();
  // The run's process: its intent is journalled; its record comes later.
  const running = await SubcommandAuditLog.open(root, { repoName: 'demo', lockTimeoutMs: 200 });
  const intent = await running.begin({ command: 'branch:list', args: {}, actor: 'alice' });
  let finished = false;
  // Another process starts meanwhile and recovers the journal. At the moment it asks whether the run's process
  // is gone, that process appends its record and exits. (Its outcome is journalled under the journal's lock,
  // which the starting process holds: that write times out, and the record goes to the log all the same.)
  const starting = await SubcommandAuditLog.open(root, {
    repoName: 'demo',
    ownerGone: async () => {
      if (!finished) {
        finished = true;
        await running.finish(intent, { exit_code: 0, duration_ms: 3 });
      }
      return true;
    },
  });
  try {
    const records = (await logLines(root)).filter((line) => line.intent === intent.id);
    assert.equal(records.length, 1, 'the run has one record');
    assert.equal(records[0]!.result, undefined, 'the one record is the run’s own, not a recovered one');
    assert.equal((await starting.verify()).valid, true);
  } finally {
    await starting.close();
    await running.close();
  }
});
