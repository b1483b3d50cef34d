import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// examples.test.ts runs http.ts and checks its output; this pins the package README to it.
const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const readme = await readFile(fileURLToPath(new URL('../../packages/workflow-http/README.md', import.meta.url)), 'utf8');

test('the workflow-http README shows http.ts verbatim, with its output', async () => {
  const source = (await readFile(here('http.ts'), 'utf8')).trim();
  assert.ok(readme.includes(source), 'packages/workflow-http/README.md must show http.ts verbatim');
  assert.ok(readme.includes('200 CREATED -> SPECIFIED\n409 wp-ci-before-review\ntrue\n'), 'the README shows what http.ts prints');
});
