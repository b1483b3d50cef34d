import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runWorkspaceProgram } from '@switchyard/test-support';

const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const auditChainBin = fileURLToPath(new URL('../../packages/audit-chain/src/bin.ts', import.meta.url));
const readme = await readFile(fileURLToPath(new URL('../../packages/workflow/README.md', import.meta.url)), 'utf8');
const dir = await mkdtemp(join(tmpdir(), 'workflow-example-'));
after(() => rm(dir, { recursive: true, force: true }));

test('the README quick start is this file, and it runs', async () => {
  const source = await readFile(here('quickstart.ts'), 'utf8');
  assert.ok(readme.includes(source.trim()), 'packages/workflow/README.md must show quickstart.ts verbatim');
  const { stdout } = await runWorkspaceProgram(here('quickstart.ts'));
  assert.equal(
    stdout,
    [
      'refused: wp-ci-before-review: work package 1 of 001-login has no ci_output evidence',
      'applied: DOING -> REVIEW evidence [ 3 ]',
      'audit: true 7 entries, workflow:shop/001-login',
      '',
    ].join('\n'),
  );
});

test('the SQLite example writes .agileplus/agileplus.db and audit.jsonl, and the exported trail verifies with audit-chain', async () => {
  const repo = join(dir, 'repo');
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  const { stdout } = await runWorkspaceProgram(here('sqliteAndSubcommands.ts'), [repo]);
  const [written, refused, valid, ...trail] = stdout.trim().split('\n');
  assert.match(written!, /^artifact:write exit 0 \{"path":"002-search\/spec.md","hash":"sha256:[0-9a-f]{64}","size_bytes":9\}$/);
  assert.equal(refused, 'branch:create exit 2 unsafe_argument');
  assert.equal(valid, 'subcommand log valid: true');
  assert.equal((await readFile(join(repo, '.agileplus', 'audit.jsonl'), 'utf8')).trim().split('\n').length, 2);
  await writeFile(join(dir, 'trail.jsonl'), `${trail.join('\n')}\n`);
  const verified = await runWorkspaceProgram(auditChainBin, [
    'verify',
    join(dir, 'trail.jsonl'),
    '--origin',
    'workflow:shop/002-search',
    '--json',
  ]);
  assert.equal(JSON.parse(verified.stdout).entries_verified, 1);
  assert.ok(readme.includes('sqliteAndSubcommands.ts'));
});
