import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runWorkspaceProgram } from '@switchyard/test-support';

const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const readme = await readFile(fileURLToPath(new URL('../../packages/http-kit/README.md', import.meta.url)), 'utf8');

test('the README quick start is this file, and every refusal has the one error shape', async () => {
  const source = await readFile(here('quickstart.ts'), 'utf8');
  assert.ok(readme.includes(source.trim()), 'packages/http-kit/README.md must show quickstart.ts verbatim');
  const { stdout } = await runWorkspaceProgram(here('quickstart.ts'), [], {
    timeout: 60_000,
  });
  const expected = [
    '201 - {"saved":"buy milk"}',
    '422 - {"error":{"code":"validation_failed","message":"text must be a string","details":{"field":"text"}}}',
    '413 - {"error":{"code":"payload_too_large","message":"a note must be at most 64 bytes"}}',
    '405 POST {"error":{"code":"method_not_allowed","message":"DELETE is not allowed on /notes; use POST"}}',
    '404 - {"error":{"code":"not_found","message":"no route for GET /nowhere"}}',
  ].join('\n');
  assert.equal(stdout, `${expected}\n`);
  assert.ok(readme.includes(expected), 'the README shows the output');
});
