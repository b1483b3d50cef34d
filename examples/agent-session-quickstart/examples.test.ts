import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runWorkspaceProgram } from '@switchyard/test-support';

const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const readme = await readFile(fileURLToPath(new URL('../../packages/agent-session/README.md', import.meta.url)), 'utf8');

test('the README quick start is this file, and it runs', { timeout: 60_000 }, async () => {
  const source = await readFile(here('quickstart.ts'), 'utf8');
  assert.ok(readme.includes(source.trim()), 'packages/agent-session/README.md must show quickstart.ts verbatim');
  const { stdout } = await runWorkspaceProgram(here('quickstart.ts'));
  assert.match(stdout, /^user: print\(6 \* 7\)\nagent: 42\nchat with it at http:\/\/127\.0\.0\.1:\d+\/chat\n$/);
});
