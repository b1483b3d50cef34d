import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runWorkspaceProgram } from '@switchyard/test-support';

const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const guide = await readFile(fileURLToPath(new URL('../../docs/translation.md', import.meta.url)), 'utf8');

test('the guide’s quick start is this file, and an Anthropic client gets its answer from an OpenAI-style provider', async () => {
  const source = await readFile(here('quickstart.ts'), 'utf8');
  assert.ok(guide.includes(source.trim()), 'docs/translation.md must show quickstart.ts verbatim');
  const { stdout } = await runWorkspaceProgram(here('quickstart.ts'), [], { timeout: 60_000 });
  assert.match(stdout, /^Hello from Switchyard's mock provider \(a demo, not a model\)\. You said: Hello! \| end_turn \d+\n$/);
});

test('the guide’s translation by hand is this file, and it prints a Gemini body and the dropped field', async () => {
  const source = await readFile(here('translateByHand.ts'), 'utf8');
  assert.ok(guide.includes(source.trim()), 'docs/translation.md must show translateByHand.ts verbatim');
  const { stdout } = await runWorkspaceProgram(here('translateByHand.ts'), [], { timeout: 60_000 });
  const [json, dropped] = stdout.trim().split('\n');
  const body = JSON.parse(json!) as Record<string, unknown>;
  assert.deepEqual(body.systemInstruction, { parts: [{ text: 'Be brief.' }] });
  assert.deepEqual(body.generationConfig, { temperature: 0.2 });
  assert.equal(dropped, 'dropped: logit_bias');
});
