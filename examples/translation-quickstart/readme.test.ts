import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// examples.test.ts runs translateByHand.ts and checks its output; this pins the package README to it.
const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const readme = await readFile(fileURLToPath(new URL('../../packages/translate/README.md', import.meta.url)), 'utf8');

test('the translate README shows translateByHand.ts verbatim, and it imports only @switchyard/translate', async () => {
  const source = (await readFile(here('translateByHand.ts'), 'utf8')).trim();
  assert.ok(readme.includes(source), 'packages/translate/README.md must show translateByHand.ts verbatim');
  const imported = [...source.matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
  assert.deepEqual(imported, ['@switchyard/translate']);
});
