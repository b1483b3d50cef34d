import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runWorkspaceProgram } from '@switchyard/test-support';

const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const readme = await readFile(fileURLToPath(new URL('../../packages/relay/README.md', import.meta.url)), 'utf8');

test('the README quick start is this file, and the mock provider answers one request into the MemorySink', async () => {
  const source = await readFile(here('quickstart.ts'), 'utf8');
  assert.ok(readme.includes(source.trim()), 'packages/relay/README.md must show quickstart.ts verbatim');
  const { stdout } = await runWorkspaceProgram(here('quickstart.ts'), [], {
    timeout: 60_000,
  });
  const lines = stdout.split('\n');
  assert.equal(lines.length, 4, stdout); // three lines and the final newline
  assert.equal(lines[0], 'success via demo in 1 attempt(s)');
  assert.equal(lines[1], '200 demo');
  assert.equal(lines[3], '');
  const body = JSON.parse(lines[2]!) as {
    object: string;
    model: string;
    choices: { message: { role: string; content: string }; finish_reason: string }[];
    usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  };
  assert.equal(body.object, 'chat.completion');
  assert.equal(body.model, 'demo-model');
  assert.deepEqual(body.choices[0]?.message, {
    role: 'assistant',
    content: "Hello from Switchyard's mock provider (a demo, not a model). You said: Hello!",
  });
  assert.equal(body.choices[0]?.finish_reason, 'stop');
  assert.ok(body.usage.prompt_tokens > 0 && body.usage.completion_tokens > 0);
  assert.equal(body.usage.total_tokens, body.usage.prompt_tokens + body.usage.completion_tokens);
  // The README's sample output is what the example prints, up to the `created` timestamp.
  assert.ok(readme.includes(`${lines[0]}\n${lines[1]}\n`), 'the README shows the first two lines of output');
  assert.ok(readme.includes(lines[2]!.replace(/"created":\d+/, '"created":1767225600')), 'the README shows the body');
});
