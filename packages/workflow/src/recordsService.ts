/**
 * @module recordsService
 * Evidence, metrics and versioned contracts of features and work packages.
 * Each one is an applied change, so each commits with an audit entry on the
 * feature's chain; evidence is referenced by id from transition entries.
 */
import { createHash } from 'node:crypto';
import type { AuditTrail } from './audit/auditTrail.js';
import {
  type AddContractInput,
  type AttachEvidenceInput,
  addContractInput,
  attachEvidenceInput,
  parseInput,
  type RecordMetricInput,
  recordMetricInput,
} from './domain/inputs.js';
import type { Contract, Evidence, Feature, Metric, WorkPackage } from './domain/model.js';
import { transitionString } from './domain/stateMachine.js';
import { NotFoundError } from './errors.js';
import type { WorkflowStore, WorkflowTx } from './store/workflowStore.js';
import { type Clock, isoNow } from './util/clock.js';

/** Evidence, metrics and contracts over a store. */
export class FeatureRecords {
  constructor(
    private readonly store: WorkflowStore,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
  ) {}

  private async target(tx: WorkflowTx, slug: string, sequence: number | undefined): Promise<{ feature: Feature; wp: WorkPackage | null }> {
    await tx.lock(slug);
    const feature = await tx.getFeature(slug);
    if (!feature) throw new NotFoundError('feature', slug);
    if (sequence === undefined) return { feature, wp: null };
    const wp = await tx.getWorkPackage(feature.id, sequence);
    if (!wp) throw new NotFoundError('work package', `${slug}/${sequence}`);
    return { feature, wp };
  }

  /**
   * Attaches evidence to a feature, or to one of its work packages.
   *
   * @example
   * ```ts
   * await workflow.records.attachEvidence('login', { wp_sequence: 1, type: 'ci_output', reference: 'ci#812', passed: true, actor: 'ci' });
   * ```
   */
  async attachEvidence(slug: string, input: AttachEvidenceInput): Promise<Evidence> {
    const data = parseInput(attachEvidenceInput, input);
    return this.store.transact(async (tx) => {
      const { feature, wp } = await this.target(tx, slug, data.wp_sequence);
      const evidence = await tx.insertEvidence({
        feature_id: feature.id,
        wp_id: wp ? wp.id : null,
        type: data.type,
        reference: data.reference,
        summary: data.summary,
        passed: data.passed,
        data: data.data,
        actor: data.actor,
        created_at: isoNow(this.clock),
      });
      const state = wp ? wp.state : feature.state;
      await this.audit.append(tx, slug, {
        feature_slug: slug,
        wp_sequence: wp ? wp.sequence : null,
        actor: data.actor,
        transition: transitionString(state, state),
        evidence_refs: [evidence.id],
        action: 'evidence_attached',
        detail: { type: data.type, passed: data.passed },
      });
      return evidence;
    });
  }

  /** Evidence of a feature (all of it), or of one work package. */
  async listEvidence(slug: string, wpSequence?: number): Promise<Evidence[]> {
    const feature = await this.store.reader.getFeature(slug);
    if (!feature) throw new NotFoundError('feature', slug);
    if (wpSequence === undefined) return this.store.reader.listEvidence({ featureId: feature.id });
    const wp = await this.store.reader.getWorkPackage(feature.id, wpSequence);
    if (!wp) throw new NotFoundError('work package', `${slug}/${wpSequence}`);
    return this.store.reader.listEvidence({ featureId: feature.id, wpId: wp.id });
  }

  /** Records a metric value (coverage, latency…) that thresholds read; the latest value counts. */
  async recordMetric(slug: string, input: RecordMetricInput): Promise<Metric> {
    const data = parseInput(recordMetricInput, input);
    return this.store.transact(async (tx) => {
      const { feature, wp } = await this.target(tx, slug, data.wp_sequence);
      const metric = await tx.insertMetric({
        name: data.name,
        value: data.value,
        feature_id: feature.id,
        wp_id: wp ? wp.id : null,
        recorded_at: isoNow(this.clock),
      });
      const state = wp ? wp.state : feature.state;
      await this.audit.append(tx, slug, {
        feature_slug: slug,
        wp_sequence: wp ? wp.sequence : null,
        actor: data.actor,
        transition: transitionString(state, state),
        evidence_refs: [],
        action: 'metric_recorded',
        detail: { name: data.name, value: data.value },
      });
      return metric;
    });
  }

  async listMetrics(slug: string): Promise<Metric[]> {
    const feature = await this.store.reader.getFeature(slug);
    if (!feature) throw new NotFoundError('feature', slug);
    return this.store.reader.listMetrics(feature.id);
  }

  /**
   * Saves a new version of a named contract. Saving content identical to
   * the latest version returns that version instead of adding one.
   */
  async addContract(slug: string, input: AddContractInput): Promise<{ contract: Contract; created: boolean }> {
    const data = parseInput(addContractInput, input);
    const contentHash = `sha256:${createHash('sha256').update(data.content, 'utf8').digest('hex')}`;
    return this.store.transact(async (tx) => {
      const { feature } = await this.target(tx, slug, undefined);
      const versions = await tx.listContracts(feature.id, data.name);
      const latest = versions[versions.length - 1];
      if (latest && latest.content_hash === contentHash) return { contract: latest, created: false };
      const contract = await tx.insertContract({
        feature_id: feature.id,
        version: (latest?.version ?? 0) + 1,
        name: data.name,
        content: data.content,
        content_hash: contentHash,
        actor: data.actor,
        created_at: isoNow(this.clock),
      });
      await this.audit.append(tx, slug, {
        feature_slug: slug,
        wp_sequence: null,
        actor: data.actor,
        transition: transitionString(feature.state, feature.state),
        evidence_refs: [],
        action: 'contract_versioned',
        detail: { name: contract.name, version: contract.version, content_hash: contentHash },
      });
      return { contract, created: true };
    });
  }

  async listContracts(slug: string, name?: string): Promise<Contract[]> {
    const feature = await this.store.reader.getFeature(slug);
    if (!feature) throw new NotFoundError('feature', slug);
    return this.store.reader.listContracts(feature.id, name);
  }
}
