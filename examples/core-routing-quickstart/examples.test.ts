import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runWorkspaceProgram } from '@switchyard/test-support';

const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const readme = await readFile(fileURLToPath(new URL('../../packages/core-routing/README.md', import.meta.url)), 'utf8');

// Two upstreams on loopback: `primary` always rate-limits with Retry-After: 60, `backup` answers.
const requests: string[] = [];
const upstream = createServer((req, res) => {
  requests.push(req.url ?? '');
  if (req.url?.startsWith('/primary/')) {
    res.writeHead(429, { 'retry-after': '60', 'content-type': 'application/json' });
    res.end('{"error":{"type":"rate_limit_error"}}');
  } else {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"choices":[]}');
  }
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
after(() => new Promise<void>((resolve) => upstream.close(() => resolve())));

test('the README fetch loop is quickstart.ts, under 20 lines, and it fails over and cools the rate-limited provider', async () => {
  const source = await readFile(here('quickstart.ts'), 'utf8');
  const excerpt = source.slice(0, source.indexOf('// ---- end of the README excerpt')).trim();
  assert.ok(readme.includes(excerpt), 'packages/core-routing/README.md must show the top of quickstart.ts verbatim');
  const lines = excerpt.split('\n').filter((line) => line.trim() !== '');
  assert.ok(lines.length < 20, `the excerpt has ${lines.length} lines of code`);

  const { port } = upstream.address() as AddressInfo;
  const urls = { primary: `http://127.0.0.1:${port}/primary`, backup: `http://127.0.0.1:${port}/backup` };
  const { stdout } = await runWorkspaceProgram(here('quickstart.ts'), [JSON.stringify(urls)], { timeout: 60_000 });
  assert.equal(
    stdout,
    ['request 1 → backup (200)', 'request 2 → backup (200)', 'request 3 → backup (200)', 'cooling: primary for 60 s', ''].join('\n'),
  );
  // Two 429s reach the threshold; the third request goes straight to the backup.
  assert.deepEqual(requests, [
    '/primary/chat/completions',
    '/backup/chat/completions',
    '/primary/chat/completions',
    '/backup/chat/completions',
    '/backup/chat/completions',
  ]);
});

test('the README recovery story is recovery.ts, and its output is as shown', async () => {
  const source = (await readFile(here('recovery.ts'), 'utf8')).trim();
  assert.ok(readme.includes(source), 'packages/core-routing/README.md must show recovery.ts verbatim');
  const { stdout } = await runWorkspaceProgram(here('recovery.ts'), [], { timeout: 60_000 });
  const expected = [
    '+0s openai cools down (error) until +60s',
    '+60s still down: the health check reported the upstream unhealthy',
    '+90s still down: the health check reported the upstream unhealthy',
    '+120s openai is back (health_check)',
  ].join('\n');
  assert.equal(stdout.trim(), expected);
  assert.ok(readme.includes(expected), 'the README shows the output');
});
