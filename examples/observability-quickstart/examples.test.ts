import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runWorkspaceProgram } from '@switchyard/test-support';

const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const readme = await readFile(fileURLToPath(new URL('../../packages/observability/README.md', import.meta.url)), 'utf8');

test('the README quick start is this file, and it runs', async () => {
  const source = await readFile(here('quickstart.ts'), 'utf8');
  assert.ok(readme.includes(source.trim()), 'packages/observability/README.md must show quickstart.ts verbatim');
  const { stdout } = await runWorkspaceProgram(here('quickstart.ts'), [], { timeout: 60_000 });
  const lines = stdout.trim().split('\n');
  const requestLine = JSON.parse(lines.find((l) => l.includes('"request_success"'))!);
  assert.equal(requestLine.level, 'info');
  assert.equal(requestLine.request_id, 'req-1');
  assert.deepEqual(requestLine.tokens, { input: 12, output: 48 });
  assert.match(requestLine.timestamp, /^\d{4}-\d{2}-\d{2}T/);
  assert.ok(lines.some((l) => l.includes('"msg":"provider_unhealthy"')));
  assert.ok(lines.some((l) => l.includes('"msg":"alert_firing"')));
  assert.ok(lines.includes('svc_requests_total{provider="openai",model="gpt-4o",status="success"} 1'));
  assert.ok(lines.includes('provider_down: firing'));
});
