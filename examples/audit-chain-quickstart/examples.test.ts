import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runWorkspaceProgram } from '@switchyard/test-support';

const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const dir = await mkdtemp(join(tmpdir(), 'example-'));
after(() => rm(dir, { recursive: true, force: true }));
const readme = await readFile(fileURLToPath(new URL('../../packages/audit-chain/README.md', import.meta.url)), 'utf8');

test('the README quick start is this file, and it runs', async () => {
  const source = await readFile(here('quickstart.ts'), 'utf8');
  const body = source.replace("const file = process.argv[2] ?? 'audit.jsonl';\n", "const file = 'audit.jsonl';\n");
  assert.ok(readme.includes(body.trim()), 'packages/audit-chain/README.md must show quickstart.ts verbatim');
  const { stdout } = await runWorkspaceProgram(here('quickstart.ts'), [join(dir, 'q.jsonl')]);
  assert.match(stdout, /^true 2 [0-9a-f]{64}\n$/);
});

test('the embedded verifier from the README (under ten lines) accepts a good log and rejects a bad one', async () => {
  const source = await readFile(here('embed-verifier.ts'), 'utf8');
  assert.ok(source.trim().split('\n').length < 10);
  assert.ok(readme.includes(source.trim()), 'packages/audit-chain/README.md must show embed-verifier.ts verbatim');
  const good = join(dir, 'q.jsonl');
  const ok = await runWorkspaceProgram(here('embed-verifier.ts'), [good, 'example.com/deploys']);
  assert.match(ok.stdout, /^2 entries, root [0-9a-f]{64}\n$/);
  const bad = join(dir, 'bad.jsonl');
  await writeFile(bad, (await readFile(good, 'utf8')).replace('"alice"', '"mallory"'));
  await assert.rejects(
    runWorkspaceProgram(here('embed-verifier.ts'), [bad, 'example.com/deploys']),
    (error: { code: number; stderr: string }) => {
      assert.equal(error.code, 1);
      assert.match(error.stderr, /entry 1: HASH_MISMATCH/);
      return true;
    },
  );
});

test('the pnpm start demo catches every tampering it shows', async () => {
  const demoDir = await mkdtemp(join(dir, 'demo-'));
  const { stdout } = await runWorkspaceProgram(here('demo.ts'), [demoDir]);
  assert.match(stdout, /the log as written\s+→ valid, 6 entries/);
  assert.match(stdout, /one field edited.*→ HASH_MISMATCH at entry 2/);
  assert.match(stdout, /entry 3 deleted\s+→ ID_SEQUENCE at entry 3/);
  assert.match(stdout, /last two entries cut off\s+→ TRUNCATED at entry 5/);
});
