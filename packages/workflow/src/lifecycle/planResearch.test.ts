/**
 * `plan` from the spec's checklist and from the model (a bad model answer is refused, adding
 * nothing), `research` drafted through a scripted loopback gateway from the material git finds,
 * and the check runner's evidence fields (exit code, duration on the injected clock, output hash).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { chatAnswer, fakeServer } from '../../test/fakeServer.js';
import { tempRepo } from '../../test/gitFixture.js';
import { makeWorkflow } from '../../test/helpers.js';
import { CheckRunner } from '../ci/checkRunner.js';
import type { WorkflowError } from '../errors.js';
import { ArtifactStore } from '../git/artifactStore.js';
import { GitRepository } from '../git/gitRepository.js';
import { GatewayClient } from '../llm/gatewayClient.js';
import { addPlannedPackages, checklistPlan, modelPlan } from './plan.js';
import { researchFeature, specTerms } from './research.js';

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups) await c();
});

test('the checklist notation: unchecked items in order, (after n) and (files: …) in either order; checked items skipped', () => {
  const plan = checklistPlan(
    [
      '# Login',
      '- [x] Already done',
      '- [ ] Login form (files: src/login.ts, src/login.test.ts)',
      '* [ ] Session API',
      '- [ ] Wire them (files: src/app.ts) (after 1, 2)',
      'Not a task: - [ ] inline',
    ].join('\n'),
  );
  assert.deepEqual(plan, [
    { title: 'Login form', depends_on: [], file_scope: ['src/login.ts', 'src/login.test.ts'] },
    { title: 'Session API', depends_on: [], file_scope: [] },
    { title: 'Wire them', depends_on: [1, 2], file_scope: ['src/app.ts'] },
  ]);
  assert.throws(
    () => checklistPlan('- [ ] A (after 2)\n- [ ] B'),
    (e: WorkflowError) => e.code === 'invalid_argument' && /not above it/.test(e.message),
  );
  assert.throws(() => checklistPlan('- [ ] A (after first)'), /not an item number/);
});

test("the model's plan is checked before anything is added; a bad answer is refused clearly", async () => {
  const answers = [
    JSON.stringify({ work_packages: [{ title: 'Schema' }, { title: 'API', depends_on: [1], file_scope: ['src/api.ts'] }] }),
    JSON.stringify({ work_packages: [{ title: '', depends_on: [] }] }),
    JSON.stringify({ work_packages: [{ title: 'A', depends_on: [1] }] }),
    'here is your plan: 1. do it',
  ];
  let call = 0;
  const gateway = await fakeServer((_req, res) => chatAnswer(res, answers[call++]!));
  cleanups.push(gateway.close);
  const client = new GatewayClient({ baseUrl: gateway.url, model: 'planner' });
  const good = await modelPlan(client, 'Orders', 'Store orders and serve them.');
  assert.deepEqual(good, [
    { title: 'Schema', depends_on: [], file_scope: [] },
    { title: 'API', depends_on: [1], file_scope: ['src/api.ts'] },
  ]);
  const sent = gateway.requests[0]!.json as { model: string; messages: { content: string }[]; response_format: unknown };
  assert.equal(sent.model, 'planner');
  assert.match(sent.messages[1]!.content, /Store orders and serve them/);
  assert.deepEqual(sent.response_format, { type: 'json_object' });
  for (const expected of [/work_packages\.0\.title/, /not above it/, /JSON object/])
    await assert.rejects(
      modelPlan(client, 'Orders', 'spec'),
      (e: WorkflowError) => e.code === 'upstream_failed' && expected.test(e.message),
    );

  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: 'orders', title: 'Orders', actor: 'alice' });
  await workflow.createWorkPackage('orders', { title: 'Existing', actor: 'alice' });
  const added = await addPlannedPackages(workflow, 'orders', good, 'alice');
  assert.deepEqual(
    added.map((w) => [w.sequence, w.title, w.depends_on]),
    [
      [2, 'Schema', []],
      [3, 'API', [2]],
    ],
    'plan positions become sequences after the existing packages',
  );
});

test('research: the terms of the spec found with git grep, their history, drafted through the gateway', async () => {
  const repo = await tempRepo('research-');
  cleanups.push(repo.cleanup);
  await writeFile(join(repo.root, 'session.ts'), 'export function createSession(userId: string) {\n  return userId;\n}\n');
  repo.git('add', 'session.ts');
  repo.git('commit', '--quiet', '-m', 'add createSession');
  assert.deepEqual(specTerms('Call `createSession` from src/login.ts and keep session_store; no Ordinary words.'), [
    'createSession',
    'src/login.ts',
    'session_store',
  ]);
  const gateway = await fakeServer((_req, res) => chatAnswer(res, '## Summary\n\nThe login flow should reuse createSession.'));
  cleanups.push(gateway.close);
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: 'login', title: 'Log in', description: 'Log in, then call `createSession`.', actor: 'alice' });
  await workflow.advance('login', 'specify', { actor: 'alice' });
  const artifacts = new ArtifactStore(join(repo.root, '.agileplus', 'artifacts'));
  const r = await researchFeature('login', {
    workflow,
    git: new GitRepository(repo.root),
    artifacts,
    actor: 'alice',
    gateway: new GatewayClient({ baseUrl: gateway.url, model: 'researcher' }),
  });
  assert.equal(r.drafted_by, 'llm');
  assert.equal(r.transition.to, 'RESEARCHED');
  assert.deepEqual(r.material.files, ['session.ts']);
  assert.deepEqual(r.material.hits[0], {
    term: 'createSession',
    file: 'session.ts',
    line: 1,
    text: 'export function createSession(userId: string) {',
  });
  assert.equal(r.material.history[0]!.subject, 'add createSession');
  const written = await readFile(join(artifacts.root, 'login', 'research.md'), 'utf8');
  assert.match(written, /^# Research: Log in \(login\)\n\n## Summary\n\nThe login flow should reuse createSession\./);
  assert.match(written, /- `session\.ts`\n {2}- line 1 \(`createSession`\)/);
  assert.match(written, /add createSession/);
  // The model saw the spec and the material it was to rely on.
  const prompt = (gateway.requests[0]!.json as { messages: { content: string }[] }).messages[1]!.content;
  assert.match(prompt, /Log in, then call `createSession`/);
  assert.match(prompt, /session\.ts/);
});

test('a check run: exit code, duration on the injected clock, and the SHA-256 of its whole output', async () => {
  let now = 1_000;
  const clock = { now: () => (now += 250) };
  const script = "process.stdout.write('out\\n'); process.stderr.write('err\\n'); process.exit(Number(process.argv[1]))";
  const runner = new CheckRunner({
    clock,
    checks: [
      { name: 'passes', kind: 'test', run: [process.execPath, '-e', script, '0'] },
      { name: 'fails', kind: 'lint', run: [process.execPath, '-e', script, '3'] },
      { name: 'absent', kind: 'security', run: ['no-such-program-for-yard'] },
    ],
  });
  const started: string[] = [];
  const runs = await runner.runAll(process.cwd(), { onStart: (c) => started.push(c.name) });
  assert.deepEqual(started, ['passes', 'fails', 'absent']);
  assert.deepEqual(
    runs.map((r) => [r.name, r.exit_code, r.passed, r.duration_ms]),
    [
      ['passes', 0, true, 250],
      ['fails', 3, false, 250],
      ['absent', 127, false, 250],
    ],
  );
  const both = runs[0]!.output_tail;
  assert.ok(both.includes('out\n') && both.includes('err\n'));
  assert.equal(runs[0]!.output_hash, `sha256:${createHash('sha256').update(both).digest('hex')}`);
  assert.match(runs[2]!.output_tail, /no-such-program-for-yard/);
});
