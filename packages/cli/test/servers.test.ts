import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TempRepo, tempRepo, yard } from './helpers.js';

let repo: TempRepo;
before(async () => {
  repo = await tempRepo();
});
after(() => repo.cleanup());

test('yard serve needs a port, and refuses bad ones', async () => {
  const none = await yard(['serve', '--output', 'json'], { cwd: repo.root });
  assert.equal(none.code, 2);
  assert.match(JSON.parse(none.stderr).error.message, /--http <port>, --grpc <port> or both/);
  assert.equal((await yard(['serve', '--http', '70000'], { cwd: repo.root })).code, 2);
});

test('yard agent serve calls startAgentSessionServer, or says clearly that this build has none', async (t) => {
  const mod = (await import('@switchyard/server-http')) as Record<string, unknown>;
  if (typeof mod.startAgentSessionServer === 'function') {
    t.skip('the agent session server is present; its own tests cover serving');
    return;
  }
  const r = await yard(['agent', 'serve', '--output', 'json', '--', 'echo', 'hi'], { cwd: repo.root });
  assert.equal(r.code, 1);
  assert.deepEqual(JSON.parse(r.stderr).error.code, 'not_implemented');
  const usage = await yard(['agent', 'serve', '--transport', 'ssh', '--', 'echo'], { cwd: repo.root });
  assert.equal(usage.code, 2);
});
