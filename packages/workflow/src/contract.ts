/**
 * @module @switchyard/workflow/contract
 * The contract every `WorkflowStore` adapter passes: memory, SQLite and
 * PostgreSQL run this same suite, including audit-chain's `AuditStore`
 * contract over the store's own audit table.
 *
 * @example
 * ```ts
 * import { runWorkflowStoreContract } from '@switchyard/workflow/contract';
 * runWorkflowStoreContract('my store', async () => ({ store: await MyStore.open() }));
 * ```
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sealEntry } from '@switchyard/audit-chain';
import { runAuditStoreContract } from '@switchyard/audit-chain/contract';
import type { Feature, GovernanceRule } from './domain/model.js';
import type { AgentJob } from './domain/records.js';
import { WorkflowError } from './errors.js';
import type { WorkflowStore } from './store/workflowStore.js';
import { Workflow } from './workflow.js';

/** A store under test. */
export interface WorkflowStoreSubject {
  store: WorkflowStore;
  /** Opens the same storage again (a restart); omit for volatile stores. */
  reopen?: () => Promise<WorkflowStore>;
  close?: () => Promise<void>;
}

const T0 = '2026-03-01T10:00:00.000Z';

function feature(slug: string): Omit<Feature, 'id'> {
  return { slug, title: `Feature ${slug}`, description: 'd', state: 'CREATED', target_branch: 'main', created_at: T0, updated_at: T0 };
}

function job(id: string, slug: string, created: string): AgentJob {
  return {
    id,
    feature_slug: slug,
    wp_sequence: 1,
    kind: 'mock',
    state: 'Pending',
    review_cycles: 0,
    max_review_cycles: 3,
    outcome: null,
    result: null,
    error: null,
    created_at: created,
    updated_at: created,
    started_at: null,
    finished_at: null,
  };
}

/** Registers the `WorkflowStore` contract tests for one adapter. */
export function runWorkflowStoreContract(name: string, makeSubject: () => Promise<WorkflowStoreSubject>): void {
  describe(`WorkflowStore contract: ${name}`, () => {
    const withSubject = (fn: (subject: WorkflowStoreSubject) => Promise<void>) => async () => {
      const subject = await makeSubject();
      try {
        await fn(subject);
      } finally {
        await subject.close?.();
      }
    };

    test(
      'features: insert, read back, list by state, update, unique slugs',
      withSubject(async ({ store }) => {
        const a = await store.transact((tx) => tx.insertFeature(feature('alpha')));
        const b = await store.transact((tx) => tx.insertFeature(feature('beta')));
        assert.ok(a.id > 0 && b.id > a.id);
        assert.deepEqual(await store.reader.getFeature('alpha'), a);
        assert.deepEqual(await store.reader.getFeatureById(b.id), b);
        assert.equal(await store.reader.getFeature('missing'), undefined);
        const moved = await store.transact((tx) => tx.updateFeature(a.id, { state: 'SPECIFIED', updated_at: '2026-03-01T11:00:00.000Z' }));
        assert.equal(moved.state, 'SPECIFIED');
        assert.equal(moved.slug, 'alpha');
        assert.deepEqual(
          (await store.reader.listFeatures({ state: 'SPECIFIED' })).map((f) => f.slug),
          ['alpha'],
        );
        assert.deepEqual(
          (await store.reader.listFeatures()).map((f) => f.slug),
          ['alpha', 'beta'],
        );
        await assert.rejects(
          store.transact((tx) => tx.insertFeature(feature('alpha'))),
          (e: unknown) => e instanceof WorkflowError && e.code === 'already_exists',
        );
        await assert.rejects(
          store.transact((tx) => tx.updateFeature(9999, { title: 'x' })),
          (e: unknown) => e instanceof WorkflowError && e.code === 'not_found',
        );
      }),
    );

    test(
      'work packages: JSON columns round-trip, ordered by sequence, unique per feature',
      withSubject(async ({ store }) => {
        const f = await store.transact((tx) => tx.insertFeature(feature('wp-feature')));
        const base = {
          feature_id: f.id,
          title: 't',
          state: 'PLANNED' as const,
          agent_id: null,
          pr_url: null,
          created_at: T0,
          updated_at: T0,
        };
        await store.transact((tx) => tx.insertWorkPackage({ ...base, sequence: 2, depends_on: [1], file_scope: ['src/a.ts', 'docs/'] }));
        const one = await store.transact((tx) => tx.insertWorkPackage({ ...base, sequence: 1, depends_on: [], file_scope: [] }));
        assert.deepEqual(
          (await store.reader.listWorkPackages(f.id)).map((w) => [w.sequence, w.depends_on, w.file_scope]),
          [
            [1, [], []],
            [2, [1], ['src/a.ts', 'docs/']],
          ],
        );
        await assert.rejects(
          store.transact((tx) => tx.insertWorkPackage({ ...base, sequence: 1, depends_on: [], file_scope: [] })),
          (e: unknown) => e instanceof WorkflowError && e.code === 'already_exists',
        );
        const updated = await store.transact((tx) =>
          tx.updateWorkPackage(one.id, { state: 'DOING', agent_id: 'agent-7', file_scope: ['x'] }),
        );
        assert.deepEqual([updated.state, updated.agent_id, updated.file_scope, updated.pr_url], ['DOING', 'agent-7', ['x'], null]);
        assert.deepEqual(await store.reader.getWorkPackage(f.id, 1), updated);
      }),
    );

    test(
      'evidence, metrics and contracts filter by target',
      withSubject(async ({ store }) => {
        const f = await store.transact((tx) => tx.insertFeature(feature('records')));
        const wp = await store.transact((tx) =>
          tx.insertWorkPackage({
            feature_id: f.id,
            sequence: 1,
            title: 't',
            state: 'PLANNED',
            depends_on: [],
            file_scope: [],
            agent_id: null,
            pr_url: null,
            created_at: T0,
            updated_at: T0,
          }),
        );
        const common = { feature_id: f.id, reference: 'ci#1', summary: '', data: { url: 'x', n: 1 }, actor: 'ci', created_at: T0 };
        const e1 = await store.transact((tx) => tx.insertEvidence({ ...common, wp_id: null, type: 'test_result', passed: true }));
        const e2 = await store.transact((tx) => tx.insertEvidence({ ...common, wp_id: wp.id, type: 'ci_output', passed: false }));
        const e3 = await store.transact((tx) => tx.insertEvidence({ ...common, wp_id: wp.id, type: 'lint_result', passed: null }));
        assert.deepEqual(
          (await store.reader.listEvidence({ featureId: f.id })).map((e) => e.id),
          [e1.id, e2.id, e3.id],
        );
        assert.deepEqual(
          (await store.reader.listEvidence({ featureId: f.id, wpId: null })).map((e) => e.id),
          [e1.id],
        );
        assert.deepEqual(
          (await store.reader.listEvidence({ featureId: f.id, wpId: wp.id })).map((e) => [e.id, e.passed]),
          [
            [e2.id, false],
            [e3.id, null],
          ],
        );
        assert.deepEqual(await store.reader.getEvidence(e1.id), e1);
        await store.transact((tx) => tx.insertMetric({ name: 'coverage', value: 71.5, feature_id: f.id, wp_id: null, recorded_at: T0 }));
        await store.transact((tx) => tx.insertMetric({ name: 'coverage', value: 90, feature_id: f.id, wp_id: wp.id, recorded_at: T0 }));
        assert.deepEqual(
          (await store.reader.listMetrics(f.id, null)).map((m) => m.value),
          [71.5],
        );
        assert.deepEqual(
          (await store.reader.listMetrics(f.id, wp.id)).map((m) => m.value),
          [90],
        );
        assert.equal((await store.reader.listMetrics(f.id)).length, 2);
        const c = { feature_id: f.id, content: 'spec', content_hash: 'sha256:00', actor: 'a', created_at: T0 };
        await store.transact((tx) => tx.insertContract({ ...c, name: 'spec', version: 1 }));
        await store.transact((tx) => tx.insertContract({ ...c, name: 'spec', version: 2 }));
        await store.transact((tx) => tx.insertContract({ ...c, name: 'api', version: 1 }));
        await assert.rejects(
          store.transact((tx) => tx.insertContract({ ...c, name: 'spec', version: 2 })),
          (e: unknown) => e instanceof WorkflowError && e.code === 'already_exists',
        );
        assert.deepEqual(
          (await store.reader.listContracts(f.id)).map((x) => `${x.name}@${x.version}`),
          ['api@1', 'spec@1', 'spec@2'],
        );
        assert.deepEqual(
          (await store.reader.listContracts(f.id, 'spec')).map((x) => x.version),
          [1, 2],
        );
      }),
    );

    test(
      'rules: seed keeps an existing rule, put replaces it',
      withSubject(async ({ store }) => {
        const rule: GovernanceRule = {
          rule_id: 'r1',
          transition: 'DOING -> REVIEW',
          scope: 'work_package',
          domain: 'custom',
          description: '',
          required_evidence: ['ci_output'],
          thresholds: [{ metric: 'coverage', min: 50 }],
          require_work_packages_done: false,
          remediation: '',
          enabled: true,
          default_enabled: true,
          builtin: false,
          updated_at: T0,
          updated_by: 'x',
        };
        await store.transact((tx) => tx.seedRule(rule));
        await store.transact((tx) => tx.seedRule({ ...rule, enabled: false }));
        assert.equal((await store.reader.getRule('r1'))?.enabled, true);
        await store.transact((tx) => tx.putRule({ ...rule, enabled: false }));
        assert.deepEqual(await store.reader.getRule('r1'), { ...rule, enabled: false });
        assert.deepEqual(
          (await store.reader.listRules()).map((r) => r.rule_id),
          ['r1'],
        );
      }),
    );

    test(
      'agent events: ids ascend across transactions; read after an id, by job or feature, limited; a rollback stores none',
      withSubject(async ({ store }) => {
        const event = (jobId: string, featureSlug: string, kind: 'status' | 'output', data: Record<string, unknown>) => ({
          jobId,
          featureSlug,
          wpSequence: 1,
          kind,
          data,
          at: 1_772_355_600_000,
        });
        const a = await store.transact((tx) => tx.appendAgentEvent(event('j1', 'f', 'status', { state: 'Running' })));
        const b = await store.transact((tx) => tx.appendAgentEvent({ ...event('j2', 'g', 'output', { chunk: 'hé\n' }), id: 999 }));
        await assert.rejects(
          store.transact(async (tx) => {
            await tx.appendAgentEvent(event('j1', 'f', 'output', { chunk: 'lost' }));
            throw new Error('roll back');
          }),
          /roll back/,
        );
        const c = await store.transact((tx) => tx.appendAgentEvent(event('j1', 'f', 'status', { state: 'Completed' })));
        assert.ok(a.id < b.id && b.id < c.id, 'ids ascend; a given id is ignored');
        assert.deepEqual(await store.reader.listAgentEvents(), [a, b, c]);
        assert.deepEqual(b, { ...event('j2', 'g', 'output', { chunk: 'hé\n' }), id: b.id });
        assert.deepEqual(
          (await store.reader.listAgentEvents({ afterId: a.id })).map((e) => e.id),
          [b.id, c.id],
        );
        assert.deepEqual(
          (await store.reader.listAgentEvents({ jobId: 'j1' })).map((e) => e.data.state),
          ['Running', 'Completed'],
        );
        assert.deepEqual(
          (await store.reader.listAgentEvents({ featureSlug: 'g' })).map((e) => e.jobId),
          ['j2'],
        );
        assert.deepEqual(
          (await store.reader.listAgentEvents({ limit: 1 })).map((e) => e.id),
          [a.id],
        );
      }),
    );

    test(
      'backlog, jobs, sync links and webhook deliveries',
      withSubject(async ({ store }) => {
        const item = {
          title: 'Crash on save',
          description: '',
          type: 'bug' as const,
          status: 'open' as const,
          priority: 80,
          confidence: 0.9,
          source: 'heuristic' as const,
          feature_slug: null,
          created_at: T0,
          updated_at: T0,
        };
        const i1 = await store.transact((tx) => tx.insertBacklogItem(item));
        await store.transact((tx) => tx.insertBacklogItem({ ...item, type: 'idea', priority: 10 }));
        const taken = await store.transact((tx) => tx.updateBacklogItem(i1.id, { status: 'in_progress' }));
        assert.equal(taken.status, 'in_progress');
        assert.deepEqual(
          (await store.reader.listBacklog({ status: 'open' })).map((i) => i.type),
          ['idea'],
        );
        assert.deepEqual(
          (await store.reader.listBacklog({ type: 'bug' })).map((i) => i.id),
          [i1.id],
        );
        assert.equal((await store.reader.listBacklog()).length, 2);
        await store.transact((tx) => tx.insertJob(job('00000000-0000-4000-8000-000000000002', 'f', '2026-03-01T10:00:02.000Z')));
        await store.transact((tx) => tx.insertJob(job('00000000-0000-4000-8000-000000000001', 'g', '2026-03-01T10:00:01.000Z')));
        const ran = await store.transact((tx) =>
          tx.updateJob('00000000-0000-4000-8000-000000000002', {
            state: 'Completed',
            result: { exit_code: 0, commits: ['abc'], pr_url: null, output: 'ok' },
          }),
        );
        assert.equal(ran.result?.commits[0], 'abc');
        assert.deepEqual(
          (await store.reader.listJobs()).map((j) => j.feature_slug),
          ['g', 'f'],
        );
        assert.deepEqual(
          (await store.reader.listJobs({ state: 'Completed' })).map((j) => j.feature_slug),
          ['f'],
        );
        assert.deepEqual((await store.reader.listJobs({ featureSlug: 'g' })).length, 1);
        const link = {
          system: 'tracker' as const,
          local_key: 'feature:f',
          remote_id: '17',
          remote_url: null,
          local_hash: 'a',
          remote_hash: 'b',
          updated_at: T0,
        };
        await store.transact((tx) => tx.putSyncLink(link));
        await store.transact((tx) => tx.putSyncLink({ ...link, remote_hash: 'c' }));
        assert.equal((await store.reader.getSyncLink('tracker', 'feature:f'))?.remote_hash, 'c');
        assert.equal((await store.reader.listSyncLinks('code_host')).length, 0);
        assert.equal(await store.transact((tx) => tx.recordDelivery('d-1', T0)), true);
        assert.equal(await store.transact((tx) => tx.recordDelivery('d-1', T0)), false);
        const later = new Date(Date.parse(T0) + 600_000).toISOString();
        assert.equal(await store.transact((tx) => tx.recordDelivery('d-2', later)), true);
        assert.equal(await store.transact((tx) => tx.pruneDeliveries(later)), 1, 'only the delivery received before the cut');
        assert.equal(await store.transact((tx) => tx.recordDelivery('d-1', later)), true, 'a pruned id is forgotten');
        assert.equal(await store.transact((tx) => tx.recordDelivery('d-2', later)), false, 'a kept id is still known');
      }),
    );

    test(
      'a failed transaction leaves no trace, audit entries included',
      withSubject(async ({ store }) => {
        await assert.rejects(
          store.transact(async (tx) => {
            const f = await tx.insertFeature(feature('doomed'));
            await tx.appendAudit('doomed', (head) => [
              sealEntry({ id: head.size + 1, prevHash: '0'.repeat(64), timestamp: T0, fields: { feature_slug: 'doomed' } }),
            ]);
            await tx.updateFeature(f.id, { state: 'SPECIFIED' });
            throw new Error('boom');
          }),
          /boom/,
        );
        assert.equal(await store.reader.getFeature('doomed'), undefined);
        assert.deepEqual(await store.auditStore('doomed').head(), { size: 0, hash: null });
        assert.deepEqual(await store.auditChains(), []);
      }),
    );

    test(
      'auditEntries reads a chain oldest first; inside a transaction it sees the transaction own appends',
      withSubject(async ({ store }) => {
        const seal = (fields: Record<string, string>) => (head: { size: number; hash: string | null }) => [
          sealEntry({ id: head.size + 1, prevHash: head.hash ?? '0'.repeat(64), timestamp: T0, fields }),
        ];
        await store.transact((tx) => tx.appendAudit('trail', seal({ step: 'one' })));
        const inside = await store.transact(async (tx) => {
          await tx.appendAudit('trail', seal({ step: 'two' }));
          return (await tx.auditEntries('trail')).map((e) => e.step);
        });
        assert.deepEqual(inside, ['one', 'two']);
        assert.deepEqual(
          (await store.reader.auditEntries('trail')).map((e) => [e.id, e.step]),
          [
            [1, 'one'],
            [2, 'two'],
          ],
        );
        assert.deepEqual(await store.reader.auditEntries('nothing-here'), []);
      }),
    );

    test(
      'concurrent workflow changes on one feature keep state and chain consistent',
      withSubject(async ({ store }) => {
        const workflow = new Workflow({ store, repoName: 'contract' });
        await workflow.createFeature({ slug: 'busy', title: 'Busy', actor: 'alice' });
        await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            workflow.records.attachEvidence('busy', { type: 'test_result', reference: `run-${i}`, passed: true, actor: `w${i % 3}` }),
          ),
        );
        const results = await Promise.allSettled(Array.from({ length: 4 }, () => workflow.advance('busy', 'specify', { actor: 'racer' })));
        assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1, 'exactly one racer moves the feature');
        const verification = await workflow.audit.verify('busy');
        assert.equal(verification.valid, true, verification.error_message ?? '');
        assert.equal(verification.entries_verified, 14);
        assert.equal((await workflow.getFeature('busy')).state, 'SPECIFIED');
        assert.deepEqual(await store.auditChains(), ['busy']);
      }),
    );

    test(
      'everything survives reopening',
      withSubject(async (subject) => {
        if (!subject.reopen) return;
        const workflow = new Workflow({ store: subject.store, repoName: 'contract' });
        await workflow.createFeature({ slug: 'durable', title: 'Durable', actor: 'alice' });
        await workflow.advance('durable', 'specify', { actor: 'alice' });
        const before = await workflow.audit.exportJsonl('durable');
        const reopened = await subject.reopen();
        try {
          const again = new Workflow({ store: reopened, repoName: 'contract' });
          assert.equal((await again.getFeature('durable')).state, 'SPECIFIED');
          assert.equal(await again.audit.exportJsonl('durable'), before);
          assert.equal((await again.audit.verify('durable')).valid, true);
        } finally {
          await reopened.close();
        }
      }),
    );
  });

  let chainCounter = 0;
  runAuditStoreContract(`${name} (audit table)`, async () => {
    const subject = await makeSubject();
    const chain = `contract-${++chainCounter}`;
    return {
      store: subject.store.auditStore(chain),
      ...(subject.reopen
        ? {
            reopen: async () => {
              const again = await subject.reopen!();
              reopened.push(again);
              return again.auditStore(chain);
            },
          }
        : {}),
      close: async () => {
        for (const s of reopened.splice(0)) await s.close();
        await subject.close?.();
      },
    };
  });
  const reopened: WorkflowStore[] = [];
}
