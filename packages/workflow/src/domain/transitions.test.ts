import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeWorkflow, satisfyFeatureGates, satisfyWorkPackageGates } from '../../test/helpers.js';
import { WorkflowError } from '../errors.js';
import { FEATURE_STATES, type WorkPackageState, WP_STATES } from './model.js';
import { FEATURE_COMMANDS, planFeatureMove, WP_TRANSITIONS } from './stateMachine.js';

const code = (expected: string) => (error: unknown) => error instanceof WorkflowError && error.code === expected;

test('every feature command moves exactly one step forward', async () => {
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: 'login', title: 'Login', actor: 'alice' });
  await satisfyFeatureGates(workflow, 'login');
  const commands = Object.keys(FEATURE_COMMANDS);
  assert.deepEqual(commands, ['specify', 'research', 'plan', 'implement', 'validate', 'ship', 'retrospective']);
  for (const [i, command] of commands.entries()) {
    const result = await workflow.advance('login', command, { actor: 'alice' });
    assert.equal(result.from, FEATURE_STATES[i]);
    assert.equal(result.to, FEATURE_STATES[i + 1]);
    assert.equal(result.entry.transition, `${FEATURE_STATES[i]} -> ${FEATURE_STATES[i + 1]}`);
    assert.deepEqual(result.skipped, []);
  }
  assert.equal((await workflow.getFeature('login')).state, 'RETROSPECTED');
  await assert.rejects(workflow.advance('login', 'ship', { actor: 'alice' }), code('backward_transition'));
  await assert.rejects(workflow.advance('login', 'deploy', { actor: 'alice' }), code('invalid_argument'));
});

test('every feature pair: one step forward applies, skips need force (recorded), backwards and same-state are refused', async () => {
  for (const [a, from] of FEATURE_STATES.entries()) {
    for (const [b, to] of FEATURE_STATES.entries()) {
      const { workflow } = makeWorkflow();
      await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
      await satisfyFeatureGates(workflow, 'f');
      if (a > 0) await workflow.transitionFeature('f', { to: from, actor: 'setup', force: true });
      const label = `${from} -> ${to}`;
      if (b < a) {
        await assert.rejects(workflow.transitionFeature('f', { to, actor: 'alice', force: true }), code('backward_transition'), label);
      } else if (b === a) {
        await assert.rejects(workflow.transitionFeature('f', { to, actor: 'alice', force: true }), code('invalid_transition'), label);
      } else if (b === a + 1) {
        const r = await workflow.transitionFeature('f', { to, actor: 'alice' });
        assert.equal(r.entry.forced, undefined, label);
      } else {
        await assert.rejects(workflow.transitionFeature('f', { to, actor: 'alice' }), code('invalid_transition'), label);
        const r = await workflow.transitionFeature('f', { to, actor: 'alice', force: true });
        assert.equal(r.entry.forced, true, label);
        assert.deepEqual((r.entry.detail as { skipped: string[] }).skipped, FEATURE_STATES.slice(a + 1, b), label);
        assert.deepEqual(r.skipped, FEATURE_STATES.slice(a + 1, b));
      }
      assert.equal((await workflow.audit.verify('f')).valid, true);
    }
  }
});

test('a refused move changes nothing and appends nothing', async () => {
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
  const before = await workflow.audit.exportJsonl('f');
  await assert.rejects(workflow.transitionFeature('f', { to: 'PLANNED', actor: 'alice' }), code('invalid_transition'));
  await assert.rejects(workflow.transitionFeature('f', { to: 'NOWHERE', actor: 'alice' }), code('invalid_argument'));
  await assert.rejects(workflow.transitionFeature('missing', { to: 'SPECIFIED', actor: 'alice' }), code('not_found'));
  assert.equal(await workflow.audit.exportJsonl('f'), before);
  assert.equal((await workflow.getFeature('f')).state, 'CREATED');
});

test('force skips steps but never their gates', async () => {
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
  await assert.rejects(workflow.transitionFeature('f', { to: 'SHIPPED', actor: 'alice', force: true }), (e: unknown) => {
    assert.ok(e instanceof WorkflowError && e.code === 'gate_failed');
    const ids = ((e.details?.violations ?? []) as { rule_id: string }[]).map((v) => v.rule_id).sort();
    assert.deepEqual(ids, ['feature-security-scan-before-ship', 'feature-tests-before-validated']);
    return true;
  });
});

test('every work-package pair: the eight allowed moves apply, all others are refused', async () => {
  const allowed = new Set(Object.entries(WP_TRANSITIONS).flatMap(([from, tos]) => tos.map((to) => `${from} -> ${to}`)));
  assert.deepEqual([...allowed].sort(), [
    'BLOCKED -> DOING',
    'BLOCKED -> PLANNED',
    'DOING -> BLOCKED',
    'DOING -> REVIEW',
    'PLANNED -> BLOCKED',
    'PLANNED -> DOING',
    'REVIEW -> DOING',
    'REVIEW -> DONE',
  ]);
  const pathTo: Record<WorkPackageState, WorkPackageState[]> = {
    PLANNED: [],
    DOING: ['DOING'],
    REVIEW: ['DOING', 'REVIEW'],
    DONE: ['DOING', 'REVIEW', 'DONE'],
    BLOCKED: ['BLOCKED'],
  };
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
  let sequence = 0;
  for (const from of WP_STATES) {
    for (const to of WP_STATES) {
      const wp = await workflow.createWorkPackage('f', { title: `${from}->${to}`, actor: 'alice' });
      sequence = wp.sequence;
      await satisfyWorkPackageGates(workflow, 'f', sequence);
      for (const step of pathTo[from]) await workflow.transitionWorkPackage('f', sequence, { to: step, actor: 'setup' });
      const label = `${from} -> ${to}`;
      if (allowed.has(label)) {
        const r = await workflow.transitionWorkPackage('f', sequence, { to, actor: 'alice' });
        assert.equal(r.entry.transition, label);
        assert.equal(r.entry.wp_sequence, sequence);
        assert.equal(r.work_package.state, to);
      } else {
        await assert.rejects(workflow.transitionWorkPackage('f', sequence, { to, actor: 'alice' }), code('invalid_transition'), label);
        assert.equal((await workflow.getWorkPackage('f', sequence)).state, from);
      }
    }
  }
  assert.equal(sequence, 25);
  assert.equal((await workflow.audit.verify('f')).valid, true);
});

test('the generic transition targets a work package when wp_sequence is given', async () => {
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
  await workflow.createWorkPackage('f', { title: 'one', actor: 'alice' });
  const r = await workflow.transition('f', { to: 'doing', wp_sequence: 1, actor: 'bob' });
  assert.equal(r.to, 'DOING');
  assert.equal((await workflow.getFeature('f')).state, 'CREATED');
  await assert.rejects(workflow.transition('f', { to: 'review', wp_sequence: 1, actor: 'bob', force: true }), code('invalid_argument'));
  await assert.rejects(workflow.transition('f', { to: 'DONE', wp_sequence: 9, actor: 'bob' }), code('not_found'));
  await assert.rejects(
    workflow.transition('f', { to: 'DONE', actor: '' }),
    (e: unknown) => e instanceof WorkflowError && e.details?.field === 'actor',
  );
});

test('a work package starts only when its dependencies and lower packages sharing files are DONE', async () => {
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
  await workflow.createWorkPackage('f', { title: 'schema', file_scope: ['db/schema.sql'], actor: 'a' });
  await workflow.createWorkPackage('f', { title: 'api', depends_on: [1], file_scope: ['src/api.ts'], actor: 'a' });
  await workflow.createWorkPackage('f', { title: 'migration', file_scope: ['db/'], actor: 'a' });
  await workflow.createWorkPackage('f', { title: 'docs', file_scope: ['docs/api.md'], actor: 'a' });
  assert.deepEqual(await workflow.waves('f'), [
    [1, 4],
    [2, 3],
  ]);
  assert.deepEqual(
    (await workflow.readyWorkPackages('f')).map((w) => w.sequence),
    [1, 4],
  );
  await assert.rejects(workflow.transitionWorkPackage('f', 2, { to: 'DOING', actor: 'a' }), (e: unknown) => {
    assert.ok(e instanceof WorkflowError && e.code === 'conflict');
    assert.deepEqual(e.details?.waiting_on, [1]);
    return true;
  });
  await assert.rejects(workflow.transitionWorkPackage('f', 3, { to: 'DOING', actor: 'a' }), code('conflict'));
  await satisfyWorkPackageGates(workflow, 'f', 1);
  for (const to of ['DOING', 'REVIEW', 'DONE']) await workflow.transitionWorkPackage('f', 1, { to, actor: 'a' });
  assert.deepEqual(
    (await workflow.readyWorkPackages('f')).map((w) => w.sequence),
    [2, 3, 4],
  );
  await workflow.transitionWorkPackage('f', 3, { to: 'DOING', actor: 'a' });
  await assert.rejects(workflow.createWorkPackage('f', { title: 'bad', depends_on: [42], actor: 'a' }), code('invalid_argument'));
  await assert.rejects(
    workflow.createWorkPackage('f', { title: 'bad', file_scope: ['../etc/passwd'], actor: 'a' }),
    code('invalid_argument'),
  );
  await assert.rejects(workflow.updateWorkPackage('f', 1, { depends_on: [2], actor: 'a' }), code('invalid_argument'));
  const updated = await workflow.updateWorkPackage('f', 2, { pr_url: 'https://code.example/pr/7', agent_id: 'agent-1', actor: 'a' });
  assert.deepEqual([updated.pr_url, updated.agent_id, updated.state], ['https://code.example/pr/7', 'agent-1', 'PLANNED']);
});

test('planFeatureMove lists every step and skipped state', () => {
  const plan = planFeatureMove('CREATED', 'PLANNED', true);
  assert.deepEqual(plan.steps, [
    { from: 'CREATED', to: 'SPECIFIED' },
    { from: 'SPECIFIED', to: 'RESEARCHED' },
    { from: 'RESEARCHED', to: 'PLANNED' },
  ]);
  assert.deepEqual(plan.skipped, ['SPECIFIED', 'RESEARCHED']);
});

test('transitions emit typed events; refused gates emit gate_failed', async () => {
  const { workflow, clock } = makeWorkflow();
  const seen: unknown[] = [];
  workflow.events.on('workflow:transition', (e) => seen.push(['t', e]));
  workflow.events.on('workflow:gate_failed', (e) => seen.push(['g', e]));
  await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
  await workflow.createWorkPackage('f', { title: 'one', actor: 'alice' });
  await workflow.transitionWorkPackage('f', 1, { to: 'DOING', actor: 'bob' });
  await assert.rejects(workflow.transitionWorkPackage('f', 1, { to: 'REVIEW', actor: 'bob' }), code('gate_failed'));
  assert.deepEqual(seen, [
    ['t', { featureSlug: 'f', wpSequence: 1, from: 'PLANNED', to: 'DOING', actor: 'bob', at: clock.now() }],
    ['g', { featureSlug: 'f', wpSequence: 1, transition: 'DOING -> REVIEW', ruleIds: ['wp-ci-before-review'], at: clock.now() }],
  ]);
});
