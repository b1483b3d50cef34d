import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeWorkflow, satisfyFeatureGates } from '../../test/helpers.js';
import { GateFailedError, WorkflowError } from '../errors.js';
import type { Workflow } from '../workflow.js';

const gateFailure = (expected: { rule_id: string; message: RegExp }[]) => (error: unknown) => {
  assert.ok(error instanceof GateFailedError, String(error));
  assert.equal(error.code, 'gate_failed');
  assert.deepEqual(
    error.violations.map((v) => v.rule_id),
    expected.map((e) => e.rule_id),
  );
  for (const [i, v] of error.violations.entries()) {
    assert.match(v.message, expected[i]!.message);
    assert.ok(v.remediation.length > 10, 'every violation says what to do');
  }
  return true;
};

async function featureAt(workflow: Workflow, state: string) {
  await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
  if (state === 'VALIDATED')
    await workflow.records.attachEvidence('f', { type: 'test_result', reference: 'tests', passed: true, actor: 'ci' });
  await workflow.transitionFeature('f', { to: state, actor: 'setup', force: true });
}

test('the default rules: which ship enabled', async () => {
  const { workflow } = makeWorkflow();
  const rules = await workflow.governance.listRules();
  assert.deepEqual(
    rules.filter((r) => r.enabled).map((r) => `${r.rule_id} [${r.transition}]`),
    [
      'feature-security-scan-before-ship [VALIDATED -> SHIPPED]',
      'feature-tests-before-validated [IMPLEMENTING -> VALIDATED]',
      'feature-work-packages-done [IMPLEMENTING -> VALIDATED]',
      'wp-ci-before-review [DOING -> REVIEW]',
      'wp-review-approval-before-done [REVIEW -> DONE]',
    ],
  );
  assert.deepEqual(
    rules.filter((r) => !r.enabled).map((r) => r.rule_id),
    ['feature-attestation-before-ship', 'feature-coverage-minimum', 'wp-lint-before-review'],
  );
  assert.ok(rules.every((r) => r.builtin && ['security', 'quality', 'compliance', 'performance', 'custom'].includes(r.domain)));
});

test('wp-ci-before-review: fails without CI output, fails on failing CI output, passes on passing CI output', async () => {
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
  await workflow.createWorkPackage('f', { title: 'one', actor: 'alice' });
  await workflow.transitionWorkPackage('f', 1, { to: 'DOING', actor: 'alice' });
  await assert.rejects(
    workflow.transitionWorkPackage('f', 1, { to: 'REVIEW', actor: 'alice' }),
    gateFailure([{ rule_id: 'wp-ci-before-review', message: /has no ci_output evidence/ }]),
  );
  const bad = await workflow.records.attachEvidence('f', {
    wp_sequence: 1,
    type: 'ci_output',
    reference: 'ci#1',
    passed: false,
    actor: 'ci',
  });
  await assert.rejects(
    workflow.transitionWorkPackage('f', 1, { to: 'REVIEW', actor: 'alice' }),
    gateFailure([{ rule_id: 'wp-ci-before-review', message: new RegExp(`failed \\(#${bad.id}\\)`) }]),
  );
  // Evidence on the feature (not the package) does not count for the package.
  await workflow.records.attachEvidence('f', { type: 'ci_output', reference: 'ci#0', passed: true, actor: 'ci' });
  await assert.rejects(workflow.transitionWorkPackage('f', 1, { to: 'REVIEW', actor: 'alice' }), WorkflowError);
  assert.deepEqual(await workflow.checkGovernance('f', { wp_sequence: 1 }), {
    passed: false,
    transition: 'DOING -> REVIEW',
    violations: [
      {
        rule_id: 'wp-ci-before-review',
        message: `the ci_output evidence for work package 1 of f failed (#${bad.id})`,
        remediation: 'Run CI on the branch and attach its output as ci_output evidence to the work package.',
      },
    ],
  });
  const good = await workflow.records.attachEvidence('f', {
    wp_sequence: 1,
    type: 'ci_output',
    reference: 'ci#2',
    passed: true,
    actor: 'ci',
  });
  assert.deepEqual(await workflow.checkGovernance('f', { wp_sequence: 1 }), {
    passed: true,
    violations: [],
    transition: 'DOING -> REVIEW',
  });
  const moved = await workflow.transitionWorkPackage('f', 1, { to: 'REVIEW', actor: 'alice' });
  assert.deepEqual(moved.entry.evidence_refs, [good.id], 'the entry cites the evidence that satisfied the gate');
});

test('wp-review-approval-before-done', async () => {
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
  await workflow.createWorkPackage('f', { title: 'one', actor: 'alice' });
  await workflow.records.attachEvidence('f', { wp_sequence: 1, type: 'ci_output', reference: 'ci', passed: true, actor: 'ci' });
  await workflow.transitionWorkPackage('f', 1, { to: 'DOING', actor: 'a' });
  await workflow.transitionWorkPackage('f', 1, { to: 'REVIEW', actor: 'a' });
  await assert.rejects(
    workflow.transitionWorkPackage('f', 1, { to: 'DONE', actor: 'a' }),
    gateFailure([{ rule_id: 'wp-review-approval-before-done', message: /no review_approval evidence/ }]),
  );
  // Sending it back for changes has no gate.
  await workflow.transitionWorkPackage('f', 1, { to: 'DOING', actor: 'a' });
  await workflow.transitionWorkPackage('f', 1, { to: 'REVIEW', actor: 'a' });
  await workflow.records.attachEvidence('f', {
    wp_sequence: 1,
    type: 'review_approval',
    reference: 'pr#3',
    passed: true,
    actor: 'reviewer',
  });
  assert.equal((await workflow.transitionWorkPackage('f', 1, { to: 'DONE', actor: 'a' })).to, 'DONE');
});

test('feature gates before VALIDATED: open work packages and missing tests, each its own violation', async () => {
  const { workflow } = makeWorkflow();
  await featureAt(workflow, 'IMPLEMENTING');
  await workflow.createWorkPackage('f', { title: 'one', actor: 'alice' });
  await workflow.createWorkPackage('f', { title: 'two', actor: 'alice' });
  await workflow.transitionWorkPackage('f', 2, { to: 'BLOCKED', actor: 'alice' });
  await assert.rejects(
    workflow.advance('f', 'validate', { actor: 'alice' }),
    gateFailure([
      { rule_id: 'feature-tests-before-validated', message: /feature f has no test_result evidence/ },
      { rule_id: 'feature-work-packages-done', message: /not DONE: 1 \(PLANNED\), 2 \(BLOCKED\)/ },
    ]),
  );
});

test('feature-security-scan-before-ship, and thresholds from metrics once an admin enables them', async () => {
  const { workflow } = makeWorkflow();
  await featureAt(workflow, 'VALIDATED');
  await assert.rejects(
    workflow.advance('f', 'ship', { actor: 'alice' }),
    gateFailure([{ rule_id: 'feature-security-scan-before-ship', message: /no security_scan evidence/ }]),
  );
  await workflow.records.attachEvidence('f', { type: 'security_scan', reference: 'scan', passed: true, actor: 'ci' });
  assert.equal((await workflow.checkGovernance('f')).passed, true);

  const { workflow: w2 } = makeWorkflow();
  await featureAt(w2, 'IMPLEMENTING');
  await satisfyFeatureGates(w2, 'f');
  await w2.governance.enforce('feature-coverage-minimum', 'enable', 'lead');
  await assert.rejects(
    w2.advance('f', 'validate', { actor: 'a' }),
    gateFailure([{ rule_id: 'feature-coverage-minimum', message: /no coverage metric is recorded for feature f \(needs at least 80\)/ }]),
  );
  await w2.records.recordMetric('f', { name: 'coverage', value: 72.5, actor: 'ci' });
  await assert.rejects(
    w2.advance('f', 'validate', { actor: 'a' }),
    gateFailure([{ rule_id: 'feature-coverage-minimum', message: /coverage is 72.5 for feature f; it must be at least 80/ }]),
  );
  await w2.records.recordMetric('f', { name: 'coverage', value: 86, actor: 'ci' });
  assert.equal((await w2.advance('f', 'validate', { actor: 'a' })).to, 'VALIDATED');
});

test('enforce is for admins only and is itself audited; reset restores the default', async () => {
  const { workflow } = makeWorkflow();
  await assert.rejects(
    workflow.governance.enforce('wp-ci-before-review', 'disable', 'mallory'),
    (e: unknown) => e instanceof WorkflowError && e.code === 'forbidden',
  );
  await assert.rejects(
    workflow.governance.enforce('no-such-rule', 'disable', 'lead'),
    (e: unknown) => e instanceof WorkflowError && e.code === 'not_found',
  );
  await assert.rejects(
    workflow.governance.enforce('wp-ci-before-review', 'toggle' as 'enable', 'lead'),
    (e: unknown) => e instanceof WorkflowError && e.code === 'invalid_argument',
  );
  const off = await workflow.governance.enforce('wp-ci-before-review', 'disable', 'lead');
  assert.equal(off.enabled, false);
  assert.equal(off.updated_by, 'lead');
  await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
  await workflow.createWorkPackage('f', { title: 'one', actor: 'alice' });
  await workflow.transitionWorkPackage('f', 1, { to: 'DOING', actor: 'a' });
  assert.equal((await workflow.checkGovernance('f', { wp_sequence: 1 })).passed, true, 'a disabled rule does not gate');
  const reset = await workflow.governance.enforce('wp-ci-before-review', 'reset', 'lead');
  assert.equal(reset.enabled, true);
  const trail = await workflow.audit.entries('_governance');
  assert.deepEqual(
    trail.map((e) => [e.actor, e.transition, e.action, (e.detail as { rule_id: string }).rule_id]),
    [
      ['lead', 'ENABLED -> DISABLED', 'rule_enforced', 'wp-ci-before-review'],
      ['lead', 'DISABLED -> ENABLED', 'rule_enforced', 'wp-ci-before-review'],
    ],
  );
  assert.equal((await workflow.audit.verify('_governance')).valid, true);
});

test('custom rules: admins define them with a domain, evidence and thresholds; built-ins cannot be redefined', async () => {
  const { workflow } = makeWorkflow();
  await assert.rejects(
    workflow.governance.defineRule({ rule_id: 'perf', transition: 'DOING -> REVIEW', scope: 'work_package' }, 'bob'),
    (e: unknown) => e instanceof WorkflowError && e.code === 'forbidden',
  );
  await assert.rejects(
    workflow.governance.defineRule({ rule_id: 'wp-ci-before-review', transition: 'DOING -> REVIEW', scope: 'work_package' }, 'lead'),
    (e: unknown) => e instanceof WorkflowError && e.code === 'already_exists',
  );
  await assert.rejects(
    workflow.governance.defineRule({ rule_id: 'Bad Id', transition: 'DOING -> REVIEW', scope: 'work_package' }, 'lead'),
    (e: unknown) => e instanceof WorkflowError && e.details?.field === 'rule_id',
  );
  const rule = await workflow.governance.defineRule(
    {
      rule_id: 'p95-latency',
      transition: 'DOING -> REVIEW',
      scope: 'work_package',
      domain: 'performance',
      thresholds: [{ metric: 'p95_ms', max: 250 }],
      remediation: 'Profile the hot path.',
    },
    'lead',
  );
  assert.equal(rule.domain, 'performance');
  await workflow.governance.enforce('wp-ci-before-review', 'disable', 'lead');
  await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
  await workflow.createWorkPackage('f', { title: 'one', actor: 'alice' });
  await workflow.transitionWorkPackage('f', 1, { to: 'DOING', actor: 'a' });
  await workflow.records.recordMetric('f', { wp_sequence: 1, name: 'p95_ms', value: 400, actor: 'bench' });
  await assert.rejects(
    workflow.transitionWorkPackage('f', 1, { to: 'REVIEW', actor: 'a' }),
    gateFailure([{ rule_id: 'p95-latency', message: /p95_ms is 400 for work package 1 of f; it must be at most 250/ }]),
  );
  await workflow.records.recordMetric('f', { wp_sequence: 1, name: 'p95_ms', value: 180, actor: 'bench' });
  assert.equal((await workflow.transitionWorkPackage('f', 1, { to: 'REVIEW', actor: 'a' })).to, 'REVIEW');
});

test('contracts are versioned per feature; identical content adds no version', async () => {
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
  const v1 = await workflow.records.addContract('f', { content: '# Spec v1', actor: 'alice' });
  const same = await workflow.records.addContract('f', { content: '# Spec v1', actor: 'bob' });
  const v2 = await workflow.records.addContract('f', { content: '# Spec v2', actor: 'alice' });
  const api = await workflow.records.addContract('f', { name: 'api', content: 'openapi: 3.1.0', actor: 'alice' });
  assert.deepEqual([v1.created, same.created, v2.created, api.created], [true, false, true, true]);
  assert.deepEqual([v1.contract.version, same.contract.version, v2.contract.version, api.contract.version], [1, 1, 2, 1]);
  assert.match(v2.contract.content_hash, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual(
    (await workflow.records.listContracts('f', 'spec')).map((c) => c.content),
    ['# Spec v1', '# Spec v2'],
  );
  const actions = (await workflow.audit.entries('f')).map((e) => e.action);
  assert.deepEqual(actions, ['feature_created', 'contract_versioned', 'contract_versioned', 'contract_versioned']);
});

test('explicit evidence refs must belong to the target and are cited', async () => {
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
  await workflow.createFeature({ slug: 'g', title: 'G', actor: 'alice' });
  const foreign = await workflow.records.attachEvidence('g', { type: 'manual_attestation', reference: 'x', actor: 'a' });
  const own = await workflow.records.attachEvidence('f', { type: 'manual_attestation', reference: 'spec signed off', actor: 'pm' });
  await assert.rejects(
    workflow.advance('f', 'specify', { actor: 'a', evidence_refs: [foreign.id] }),
    (e: unknown) => e instanceof WorkflowError && e.details?.field === 'evidence_refs',
  );
  const r = await workflow.advance('f', 'specify', { actor: 'a', evidence_refs: [own.id] });
  assert.deepEqual(r.entry.evidence_refs, [own.id]);
});
