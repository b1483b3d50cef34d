import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runWorkspaceProgram } from '@switchyard/test-support';

const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const readme = await readFile(fileURLToPath(new URL('../../packages/runtime/README.md', import.meta.url)), 'utf8');

test('the README quick start is this file, and a minute of fake time prints the probes, the timeout and no timers left', async () => {
  const source = await readFile(here('quickstart.ts'), 'utf8');
  assert.ok(readme.includes(source.trim()), 'packages/runtime/README.md must show quickstart.ts verbatim');
  const { stdout } = await runWorkspaceProgram(here('quickstart.ts'), [], {
    timeout: 60_000,
  });
  // Runs are 10 s apart from the end of the previous one (never overlapping); the hung third probe
  // is aborted, and rejected, at its 5 s deadline.
  const expected = [
    '+12s probe 1 answered',
    '+24s probe 2 answered',
    '+39s probe 3 aborted',
    '+39s timeout: the health probe timed out after 5000 ms',
    '+51s probe 4 answered',
    'timers left: 0',
  ].join('\n');
  assert.equal(stdout, `${expected}\n`);
  assert.ok(readme.includes(expected), 'the README shows the output');
});
