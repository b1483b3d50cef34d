/**
 * Shared setup for the workflow tests: a workflow on a memory store with a
 * fake clock, and shortcuts that satisfy the built-in gates.
 */
import { FakeScheduler } from '@switchyard/runtime';
import type { WorkPackage } from '../src/domain/model.js';
import { MemoryWorkflowStore } from '../src/store/memoryWorkflowStore.js';
import type { WorkflowStore } from '../src/store/workflowStore.js';
import { Workflow } from '../src/workflow.js';

export const START = Date.parse('2026-03-01T09:00:00.000Z');

export function makeWorkflow(store: WorkflowStore = new MemoryWorkflowStore()) {
  const clock = new FakeScheduler(START);
  const workflow = new Workflow({ store, repoName: 'shop', clock, admins: ['lead'] });
  return { workflow, clock, store };
}

/** A workflow (as {@link makeWorkflow}) holding feature `001-login` with one work package, for agent-job tests. */
export async function workflowWithLoginPackage(): Promise<Workflow> {
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: '001-login', title: 'Login', actor: 'alice' });
  await workflow.createWorkPackage('001-login', { title: 'Form', actor: 'alice' });
  return workflow;
}

/** Attaches every evidence type the built-in feature rules ask for. */
export async function satisfyFeatureGates(workflow: Workflow, slug: string): Promise<void> {
  for (const type of ['test_result', 'security_scan'] as const) {
    await workflow.records.attachEvidence(slug, { type, reference: `${type}-ok`, passed: true, actor: 'ci' });
  }
}

/** Attaches CI output and a review approval to a work package. */
export async function satisfyWorkPackageGates(workflow: Workflow, slug: string, sequence: number): Promise<void> {
  await workflow.records.attachEvidence(slug, { wp_sequence: sequence, type: 'ci_output', reference: 'ci#1', passed: true, actor: 'ci' });
  await workflow.records.attachEvidence(slug, {
    wp_sequence: sequence,
    type: 'review_approval',
    reference: 'review#1',
    passed: true,
    actor: 'reviewer',
  });
}

/** A work package in DOING, as an agent adapter is handed it (no store behind it). */
export function doingWorkPackage(fields: Pick<WorkPackage, 'sequence' | 'title'>): WorkPackage {
  return {
    id: 1,
    feature_id: 1,
    state: 'DOING',
    depends_on: [],
    file_scope: [],
    agent_id: null,
    pr_url: null,
    created_at: '',
    updated_at: '',
    ...fields,
  };
}
