import { GateFailedError, MemoryWorkflowStore, Workflow } from '@switchyard/workflow';

const workflow = new Workflow({ store: new MemoryWorkflowStore(), repoName: 'shop', admins: ['lead'] });
await workflow.createFeature({ slug: '001-login', title: 'Log in with passkeys', actor: 'alice' });
await workflow.advance('001-login', 'specify', { actor: 'alice' });
await workflow.createWorkPackage('001-login', { title: 'Login form', file_scope: ['src/login.ts'], actor: 'alice' });
await workflow.transitionWorkPackage('001-login', 1, { to: 'DOING', actor: 'bob' });

try {
  await workflow.transitionWorkPackage('001-login', 1, { to: 'REVIEW', actor: 'bob' });
} catch (error) {
  if (!(error instanceof GateFailedError)) throw error;
  console.log('refused:', error.violations.map((v) => `${v.rule_id}: ${v.message}`).join('; '));
}
await workflow.records.attachEvidence('001-login', { wp_sequence: 1, type: 'ci_output', reference: 'ci#42', passed: true, actor: 'ci' });
const moved = await workflow.transitionWorkPackage('001-login', 1, { to: 'REVIEW', actor: 'bob' });
console.log('applied:', moved.entry.transition, 'evidence', moved.entry.evidence_refs);

const check = await workflow.audit.verify('001-login');
console.log('audit:', check.valid, check.entries_verified, 'entries,', check.origin);
