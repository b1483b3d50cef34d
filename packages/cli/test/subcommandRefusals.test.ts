/**
 * Hidden subcommands refused before they run (a global option given wrong,
 * a database that does not open, a refused actor, arguments that do not
 * parse) are audit-logged with their exit code and refusal code, in-process
 * through `main`. Where no log can be opened (no git repository; a new log
 * without the config that names it) the error says so, and nothing is
 * planted.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { SubcommandAuditLog } from '@switchyard/workflow';
import { auditLines, type TempRepo, tempRepo, yard } from './helpers.js';

interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

const NOT_LOGGED = 'not audit-logged: no git repository to hold .agileplus/audit.jsonl';

let repo: TempRepo;
before(async () => {
  repo = await tempRepo();
  // The log's origin is named after repo_name: a refusal that starts the log must use it.
  await mkdir(join(repo.root, '.agileplus'));
  await writeFile(join(repo.root, '.agileplus', 'config.yaml'), 'repo_name: shop\n');
});
after(() => repo.cleanup());

test('a refusal before the subcommand runs gets its audit line: the exit code, the refusal code and message', async () => {
  const cases: { argv: string[]; exit: number; code: string; args: Record<string, unknown> }[] = [
    { argv: ['branch:list', '--db', join(repo.root, 'missing', 'x.db')], exit: 3, code: 'not_found', args: {} },
    // A database that does not open: SQLite cannot open a directory.
    { argv: ['branch:list', '--db', repo.root], exit: 1, code: 'internal', args: {} },
    { argv: ['branch:delete', '--name', 'x', '--output', 'yaml'], exit: 2, code: 'invalid_argument', args: { name: 'x' } },
    { argv: ['branch:list', '--actor', 'two\nlines'], exit: 2, code: 'invalid_argument', args: {} },
    { argv: ['branch:list', '--config', 'nowhere.yaml'], exit: 3, code: 'not_found', args: {} },
    { argv: ['branch:create', 'stray'], exit: 2, code: 'invalid_argument', args: { argv: ['stray'] } },
  ];
  for (const { argv, exit, code, args } of cases) {
    const before = (await auditLines(repo.root)).length;
    const r = await yard([...argv, '--output', 'json'], { cwd: repo.root });
    assert.deepEqual([r.code, r.stdout], [exit, ''], `${argv.join(' ')}: ${r.stderr}`);
    const { error } = JSON.parse(r.stderr) as ErrorBody;
    assert.equal(error.code, code, argv.join(' '));
    assert.doesNotMatch(error.message, /not audit-logged/);
    const lines = await auditLines(repo.root);
    assert.equal(lines.length, before + 1, `${argv.join(' ')} wrote one line`);
    const line = lines.at(-1)!;
    assert.deepEqual(
      [line.command, line.exit_code, line.actor, line.args, line.result],
      // A refused --actor is recorded as who is at the keyboard: git's user.name.
      [argv[0], exit, 'Test User', args, { error: { code, message: error.message } }],
      argv.join(' '),
    );
  }
  // The first refusal started the log under the config's repo_name: the chain verifies under it.
  const log = await SubcommandAuditLog.open(repo.root, { repoName: 'shop' });
  try {
    assert.equal((await log.verify()).valid, true);
  } finally {
    await log.close();
  }
  assert.doesNotMatch(repo.git('status', '--porcelain'), /audit\.jsonl/, 'the log stays out of git status');
});

test('outside a git repository (or with --repo naming none) the refusal cannot be logged, and the error says so', async () => {
  const plain = await mkdtemp(join(tmpdir(), 'yard-refused-'));
  try {
    const json = await yard(['branch:list', '--output', 'json'], { cwd: plain });
    assert.deepEqual([json.code, json.stdout], [3, '']);
    assert.deepEqual(JSON.parse(json.stderr), {
      error: {
        code: 'not_found',
        message: `${plain} is not inside a git repository: run yard in one (git init), or pass --repo <path>; ${NOT_LOGGED}`,
        details: { field: 'repo', audit_logged: false },
      },
    });
    const text = await yard(['branch:list'], { cwd: plain });
    assert.match(text.stderr, /; not audit-logged: no git repository to hold \.agileplus\/audit\.jsonl \(not_found\)\n$/);
    assert.ok(!existsSync(join(plain, '.agileplus')), 'nothing planted where there is no repository');

    // From inside a repository: the line does not go to the working directory's log either.
    const before = (await auditLines(repo.root)).length;
    for (const argv of [
      ['branch:list', '--repo', plain],
      ['branch:list', '--repo'],
    ]) {
      const r = await yard(['--output', 'json', ...argv], { cwd: repo.root });
      const { error } = JSON.parse(r.stderr) as ErrorBody;
      assert.ok(error.message.endsWith(`; ${NOT_LOGGED}`), `${argv.join(' ')}: ${error.message}`);
      assert.equal(error.details?.audit_logged, false);
    }
    assert.equal((await auditLines(repo.root)).length, before);
  } finally {
    await rm(plain, { recursive: true, force: true });
  }
});

test('without its config a new log is not started (its name is in the config) and the error says so; a log with lines takes the refusal', async () => {
  const fresh = await tempRepo();
  try {
    const refused = await yard(['branch:list', '--config', 'nowhere.yaml', '--output', 'json'], { cwd: fresh.root });
    assert.equal(refused.code, 3);
    const { error } = JSON.parse(refused.stderr) as ErrorBody;
    assert.match(
      error.message,
      /; not audit-logged: \.agileplus\/audit\.jsonl would be started without the config that names it \(repo_name\)$/,
    );
    assert.deepEqual(await auditLines(fresh.root), []);

    assert.equal((await yard(['branch:list'], { cwd: fresh.root })).code, 0);
    assert.equal((await yard(['branch:list', '--config', 'nowhere.yaml'], { cwd: fresh.root })).code, 3);
    assert.deepEqual(
      (await auditLines(fresh.root)).map((l) => [l.command, l.exit_code]),
      [
        ['branch:list', 0],
        ['branch:list', 3],
      ],
    );
  } finally {
    await fresh.cleanup();
  }
});
