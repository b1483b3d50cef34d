import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SqliteWorkflowStore } from '../src/sqlite.js';
import { Workflow } from '../src/workflow.js';

const writer = fileURLToPath(new URL('./fixtures/crashWriter.ts', import.meta.url));
const dir = await mkdtemp(join(tmpdir(), 'workflow-crash-'));
after(() => rm(dir, { recursive: true, force: true }));

/** Runs the writer until it dies (or is killed after `killAfterLines` lines); resolves with its signal. */
function runWriter(path: string, args: string[], killAfterLines?: number): Promise<NodeJS.Signals | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@switchyard/source', '--import=tsx', writer, path, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let lines = 0;
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      lines += chunk.toString().split('\n').length - 1;
      if (killAfterLines !== undefined && lines >= killAfterLines) child.kill('SIGKILL');
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => (signal ? resolve(signal) : reject(new Error(`writer exited ${code}: ${stderr}`))));
  });
}

/** Opens the database and checks: the chain verifies, and the package's state is the TO of its last entry. */
async function assertConsistent(path: string): Promise<number> {
  const store = await SqliteWorkflowStore.open({ path });
  try {
    const workflow = new Workflow({ store, repoName: 'crash' });
    const verification = await workflow.audit.verify('crash');
    assert.equal(verification.valid, true, verification.error_message ?? '');
    const entries = await workflow.audit.entries('crash');
    const last = entries.filter((e) => e.wp_sequence === 1 && e.action === 'transition').at(-1)!;
    assert.equal((await workflow.getWorkPackage('crash', 1)).state, last.transition.split(' -> ')[1]);
    return entries.length;
  } finally {
    await store.close();
  }
}

test('killed inside a transition (state and entry written, not committed): neither survives, the chain verifies', {
  timeout: 60_000,
}, async () => {
  const path = join(dir, 'inside.db');
  // 3 setup entries, then transitions; die inside the 6th append.
  assert.equal(await runWriter(path, ['--kill-inside', '6']), 'SIGKILL');
  assert.equal(await assertConsistent(path), 5);
  // The store is usable again, and the next process continues the same chain.
  assert.equal(await runWriter(path, ['--kill-inside', '3']), 'SIGKILL');
  assert.equal(await assertConsistent(path), 7);
});

test('killed at arbitrary moments while writing: state and chain stay consistent every time', { timeout: 120_000 }, async () => {
  const path = join(dir, 'loop.db');
  let previous = 0;
  for (const killAfter of [1, 7, 23, 40]) {
    assert.equal(await runWriter(path, [], killAfter), 'SIGKILL');
    const size = await assertConsistent(path);
    assert.ok(size > previous, 'each run appended transitions');
    previous = size;
  }
});
