import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runWorkspaceProgram } from '@switchyard/test-support';

const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const readme = await readFile(fileURLToPath(new URL('../../packages/credentials/README.md', import.meta.url)), 'utf8');

test('the README quick start is this file, and it rotates when the quota runs out', async () => {
  const source = await readFile(here('quickstart.ts'), 'utf8');
  assert.ok(readme.includes(source.trim()), 'packages/credentials/README.md must show quickstart.ts verbatim');
  const { stdout } = await runWorkspaceProgram(here('quickstart.ts'));
  assert.equal(
    stdout,
    [
      'rotated openai-main -> openai-backup (exhausted)',
      'served by openai-main, then openai-backup',
      'openai-backup: active, 0/unlimited tokens',
      'openai-main: exhausted, 1000/1000 tokens',
      '',
    ].join('\n'),
  );
});

test('the relay loop retries on another credential after a 429', async () => {
  const { stdout } = await runWorkspaceProgram(here('relay-loop.ts'));
  assert.equal(
    stdout,
    ['200 via openai-b', '200 via openai-b', 'openai-a: cooldown, 0 tokens', 'openai-b: available, 300 tokens', ''].join('\n'),
  );
});
