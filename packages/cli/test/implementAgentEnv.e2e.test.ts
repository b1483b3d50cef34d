/**
 * A process agent runs with `yard`'s environment (the README's promise): the
 * environment `yard` was given (`io.env`, the process's own when run from a
 * shell), not whatever else the embedding process has in `process.env`.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { type TempRepo, tempRepo, yard } from './helpers.js';

const SLUG = '001-env';
let repo: TempRepo | undefined;
after(() => repo?.cleanup());

test("implement runs a process agent with yard's environment, not the embedding process's", { timeout: 120_000 }, async () => {
  repo = await tempRepo('yard-agent-env-');
  const run = async (...args: string[]) => {
    const r = await yard(args, { cwd: repo!.root });
    assert.equal(r.code, 0, `yard ${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
  };
  await run('specify', SLUG, '--title', 'Env', '--description', 'What the agent sees.');
  await run('plan', SLUG, '--force', '--wp', 'Look around');
  const seen = join(repo.root, '.git', 'agent-env.json');
  // The agent records what it sees and fails, which ends the job at once (BLOCKED, exit 1).
  const script = `require('node:fs').writeFileSync(${JSON.stringify(seen)}, JSON.stringify({ given: process.env.YARD_GIVEN, embedder: process.env.SWITCHYARD_EMBEDDER_ONLY, seq: process.env.SWITCHYARD_WP_SEQUENCE })); process.exit(1);`;
  process.env.SWITCHYARD_EMBEDDER_ONLY = 'leaked';
  try {
    const r = await yard(['implement', SLUG, '--agent-command', process.execPath, '--agent-arg', '-e', '--agent-arg', script], {
      cwd: repo.root,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', YARD_GIVEN: 'given' },
    });
    assert.equal(r.code, 1, `${r.stdout}\n${r.stderr}`);
  } finally {
    delete process.env.SWITCHYARD_EMBEDDER_ONLY;
  }
  assert.deepEqual(JSON.parse(await readFile(seen, 'utf8')), { given: 'given', seq: '1' });
});

test("a served agent (--agent agent-session) also runs with yard's environment", { timeout: 120_000 }, async () => {
  const served = await tempRepo('yard-served-env-');
  after(() => served.cleanup());
  const run = async (...args: string[]) => {
    const r = await yard(args, { cwd: served.root });
    assert.equal(r.code, 0, `yard ${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
  };
  await run('specify', SLUG, '--title', 'Env', '--description', 'What the served agent sees.');
  await run('plan', SLUG, '--force', '--wp', 'Look around');
  const seen = join(served.root, '.git', 'served-agent-env.json');
  // The agent behind the session server records what it sees and exits: the job fails (the agent is gone).
  const script = `require('node:fs').writeFileSync(${JSON.stringify(seen)}, JSON.stringify({ given: process.env.YARD_GIVEN, embedder: process.env.SWITCHYARD_EMBEDDER_ONLY }));`;
  process.env.SWITCHYARD_EMBEDDER_ONLY = 'leaked';
  try {
    const r = await yard(
      ['implement', SLUG, '--agent', 'agent-session', '--agent-command', process.execPath, '--agent-arg', '-e', '--agent-arg', script],
      {
        cwd: served.root,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', YARD_GIVEN: 'given' },
      },
    );
    assert.notEqual(r.code, 0, `${r.stdout}\n${r.stderr}`);
  } finally {
    delete process.env.SWITCHYARD_EMBEDDER_ONLY;
  }
  assert.deepEqual(JSON.parse(await readFile(seen, 'utf8')), { given: 'given' });
});
