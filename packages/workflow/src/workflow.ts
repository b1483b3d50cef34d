/**
 * @module workflow
 * `Workflow`: the feature-workflow domain over a `WorkflowStore`. Features
 * move through their lifecycle and work packages through theirs; a change
 * applies only when the state machine allows it and the governance gates
 * pass, and it commits together with its audit entry.
 */
import type { AuditEntry } from '@switchyard/audit-chain';
import { AuditTrail } from './audit/auditTrail.js';
import { evaluateGates, type GateEvaluation, type GateSubject } from './domain/governance.js';
import {
  type CreateFeatureInput,
  type CreateWorkPackageInput,
  createFeatureInput,
  createWorkPackageInput,
  parseInput,
  type TransitionInput,
  transitionInput,
  type UpdateFeatureInput,
  type UpdateWorkPackageInput,
  updateFeatureInput,
  updateWorkPackageInput,
} from './domain/inputs.js';
import {
  FEATURE_STATES,
  type Feature,
  type FeatureState,
  type GateResult,
  type WorkPackage,
  type WorkPackageState,
} from './domain/model.js';
import {
  assertWorkPackageMove,
  FEATURE_COMMANDS,
  type FeatureCommand,
  featureCommandTarget,
  planFeatureMove,
  toFeatureState,
  toWorkPackageState,
  transitionString,
} from './domain/stateMachine.js';
import { assertPrerequisitesDone, checkEvidenceRefs } from './domain/transitionChecks.js';
import { computeWaves, effectiveDependencies } from './domain/waves.js';
import { GateFailedError, InvalidArgumentError, NotFoundError, WorkflowError } from './errors.js';
import { WorkflowEventEmitter } from './events.js';
import { GovernanceService } from './governanceService.js';
import { FeatureRecords } from './recordsService.js';
import type { WorkflowReader, WorkflowStore, WorkflowTx } from './store/workflowStore.js';
import { type Clock, isoNow, systemClock } from './util/clock.js';

/** Options of {@link Workflow}. */
export interface WorkflowOptions {
  store: WorkflowStore;
  /** Names the repository in audit origins: `workflow:<repoName>/<feature_slug>`. */
  repoName: string;
  clock?: Clock;
  /** Actors allowed to `enforce` and define governance rules. Nobody when empty. */
  admins?: readonly string[];
  events?: WorkflowEventEmitter;
}

/** A feature or work-package transition that applied, with its audit entry. */
export interface FeatureTransitionResult {
  feature: Feature;
  from: FeatureState;
  to: FeatureState;
  /** States passed over by a forced move (recorded in the entry). */
  skipped: FeatureState[];
  entry: AuditEntry;
}

export interface WorkPackageTransitionResult {
  feature: Feature;
  work_package: WorkPackage;
  from: WorkPackageState;
  to: WorkPackageState;
  entry: AuditEntry;
}

/** The natural next move of a work package, for checks that give no target. */
const NEXT_WP_STATE: Partial<Record<WorkPackageState, WorkPackageState>> = {
  PLANNED: 'DOING',
  DOING: 'REVIEW',
  REVIEW: 'DONE',
  BLOCKED: 'DOING',
};

/**
 * The feature-workflow domain.
 *
 * @example
 * ```ts
 * const workflow = new Workflow({ store: new MemoryWorkflowStore(), repoName: 'shop', admins: ['lead'] });
 * await workflow.createFeature({ slug: 'login', title: 'Log in with passkeys', actor: 'alice' });
 * await workflow.advance('login', 'specify', { actor: 'alice' }); // CREATED -> SPECIFIED
 * ```
 */
export class Workflow {
  readonly store: WorkflowStore;
  readonly audit: AuditTrail;
  readonly events: WorkflowEventEmitter;
  readonly governance: GovernanceService;
  /** Evidence, metrics and contracts. */
  readonly records: FeatureRecords;
  readonly clock: Clock;

  constructor(options: WorkflowOptions) {
    this.store = options.store;
    this.clock = options.clock ?? systemClock;
    this.events = options.events ?? new WorkflowEventEmitter();
    this.audit = new AuditTrail(this.store, options.repoName, this.clock);
    this.governance = new GovernanceService(this.store, this.audit, this.clock, options.admins ?? []);
    this.records = new FeatureRecords(this.store, this.audit, this.clock);
  }

  // ---- features ----

  /** Creates a feature in state CREATED (audited as `NONE -> CREATED`). */
  async createFeature(input: CreateFeatureInput): Promise<Feature> {
    const data = parseInput(createFeatureInput, input);
    const now = isoNow(this.clock);
    return this.store.transact(async (tx) => {
      await tx.lock(data.slug);
      if (await tx.getFeature(data.slug))
        throw new WorkflowError('already_exists', `feature ${JSON.stringify(data.slug)} already exists`, { details: { field: 'slug' } });
      const feature = await tx.insertFeature({
        slug: data.slug,
        title: data.title,
        description: data.description,
        state: 'CREATED',
        target_branch: data.target_branch,
        created_at: now,
        updated_at: now,
      });
      await tx.appendAudit(
        data.slug,
        this.audit.builder(data.slug, [
          {
            feature_slug: data.slug,
            wp_sequence: null,
            actor: data.actor,
            transition: 'NONE -> CREATED',
            evidence_refs: [],
            action: 'feature_created',
          },
        ]),
      );
      return feature;
    });
  }

  async getFeature(slug: string): Promise<Feature> {
    const feature = await this.store.reader.getFeature(slug);
    if (!feature) throw new NotFoundError('feature', slug);
    return feature;
  }

  /** Changes a feature's title, description or target branch (audited; never its state). */
  async updateFeature(slug: string, input: UpdateFeatureInput): Promise<Feature> {
    const { actor, ...patch } = parseInput(updateFeatureInput, input);
    const fields = stripUndefined(patch);
    return this.store.transact(async (tx) => {
      await tx.lock(slug);
      const feature = await this.featureIn(tx, slug);
      const updated = await tx.updateFeature(feature.id, { ...fields, updated_at: isoNow(this.clock) });
      await this.audit.append(tx, slug, {
        feature_slug: slug,
        wp_sequence: null,
        actor,
        transition: transitionString(feature.state, feature.state),
        evidence_refs: [],
        action: 'feature_updated',
        detail: { fields: Object.keys(fields).sort() },
      });
      return updated;
    });
  }

  /** Features, oldest first; `state` is any case (`planned`), as on every surface, and a bad one names the field `state`. */
  listFeatures(filter: { state?: FeatureState | string } = {}): Promise<Feature[]> {
    return this.store.reader.listFeatures(filter.state !== undefined ? { state: toFeatureState(filter.state, 'state') } : {});
  }

  /**
   * Runs a lifecycle command (`specify`, `research`, `plan`, `implement`,
   * `validate`, `ship`, `retrospective`): one step forward, or a recorded
   * skip with `force`.
   */
  async advance(
    slug: string,
    command: FeatureCommand | string,
    options: { actor: string; force?: boolean; evidence_refs?: number[] },
  ): Promise<FeatureTransitionResult> {
    return this.transitionFeature(slug, { to: featureCommandTarget(command), ...options });
  }

  /** Moves a feature to `to` (forward only; more than one step needs `force`). */
  async transitionFeature(slug: string, input: Omit<TransitionInput, 'wp_sequence'>): Promise<FeatureTransitionResult> {
    const data = parseInput(transitionInput, input);
    const to = toFeatureState(data.to);
    return this.gatedTransaction(slug, null, data.actor, async (tx, passGates) => {
      const feature = await this.featureIn(tx, slug);
      const plan = planFeatureMove(feature.state, to, data.force);
      const transition = transitionString(feature.state, to);
      await checkEvidenceRefs(tx, feature, null, data.evidence_refs);
      const used = await passGates({ feature, transitions: plan.steps.map((s) => transitionString(s.from, s.to)) }, transition);
      const updated = await tx.updateFeature(feature.id, { state: to, updated_at: isoNow(this.clock) });
      const forced = plan.skipped.length > 0;
      const entry = await this.audit.append(tx, slug, {
        feature_slug: slug,
        wp_sequence: null,
        actor: data.actor,
        transition,
        evidence_refs: union(used, data.evidence_refs),
        action: 'transition',
        ...(forced ? { forced: true, detail: { skipped: plan.skipped } } : {}),
      });
      return { feature: updated, from: feature.state, to, skipped: plan.skipped, entry };
    });
  }

  /** The generic transition the HTTP body describes: the feature, or a work package when `wp_sequence` is set. */
  async transition(slug: string, input: TransitionInput): Promise<FeatureTransitionResult | WorkPackageTransitionResult> {
    const data = parseInput(transitionInput, input);
    if (data.wp_sequence !== undefined) {
      if (data.force) throw new InvalidArgumentError('force', 'work-package moves cannot be forced');
      return this.transitionWorkPackage(slug, data.wp_sequence, data);
    }
    return this.transitionFeature(slug, data);
  }

  // ---- work packages ----

  /** Adds a work package (next sequence, state PLANNED). Dependencies must name existing packages. */
  async createWorkPackage(slug: string, input: CreateWorkPackageInput): Promise<WorkPackage> {
    const data = parseInput(createWorkPackageInput, input);
    return this.store.transact(async (tx) => {
      await tx.lock(slug);
      const feature = await this.featureIn(tx, slug);
      const existing = await tx.listWorkPackages(feature.id);
      const sequence = existing.reduce((max, w) => Math.max(max, w.sequence), 0) + 1;
      const now = isoNow(this.clock);
      const draft = { sequence, depends_on: [...new Set(data.depends_on)].sort((a, b) => a - b), file_scope: data.file_scope };
      computeWaves([...existing, draft]);
      const wp = await tx.insertWorkPackage({
        feature_id: feature.id,
        title: data.title,
        state: 'PLANNED',
        agent_id: data.agent_id,
        pr_url: null,
        created_at: now,
        updated_at: now,
        ...draft,
      });
      await this.audit.append(tx, slug, {
        feature_slug: slug,
        wp_sequence: sequence,
        actor: data.actor,
        transition: 'NONE -> PLANNED',
        evidence_refs: [],
        action: 'work_package_created',
      });
      return wp;
    });
  }

  async getWorkPackage(slug: string, sequence: number): Promise<WorkPackage> {
    const feature = await this.getFeature(slug);
    const wp = await this.store.reader.getWorkPackage(feature.id, sequence);
    if (!wp) throw new NotFoundError('work package', `${slug}/${sequence}`);
    return wp;
  }

  async listWorkPackages(slug: string): Promise<WorkPackage[]> {
    return this.store.reader.listWorkPackages((await this.getFeature(slug)).id);
  }

  /** Changes a work package's title, dependencies, file scope, agent or PR (audited; never its state). */
  async updateWorkPackage(slug: string, sequence: number, input: UpdateWorkPackageInput): Promise<WorkPackage> {
    const { actor, ...patch } = parseInput(updateWorkPackageInput, input);
    return this.store.transact(async (tx) => {
      await tx.lock(slug);
      const feature = await this.featureIn(tx, slug);
      const wp = await this.workPackageIn(tx, feature, sequence);
      const all = await tx.listWorkPackages(feature.id);
      if (patch.depends_on || patch.file_scope) computeWaves(all.map((w) => (w.id === wp.id ? { ...w, ...stripUndefined(patch) } : w)));
      const updated = await tx.updateWorkPackage(wp.id, { ...stripUndefined(patch), updated_at: isoNow(this.clock) });
      await this.audit.append(tx, slug, {
        feature_slug: slug,
        wp_sequence: sequence,
        actor,
        transition: transitionString(wp.state, wp.state),
        evidence_refs: [],
        action: 'work_package_updated',
        detail: { fields: Object.keys(stripUndefined(patch)).sort() },
      });
      return updated;
    });
  }

  /**
   * Moves a work package. The move must be allowed, its dependencies (and
   * lower packages sharing its files) DONE before it starts, and its gates
   * must pass.
   */
  async transitionWorkPackage(
    slug: string,
    sequence: number,
    input: Omit<TransitionInput, 'wp_sequence' | 'force'>,
  ): Promise<WorkPackageTransitionResult> {
    const data = parseInput(transitionInput, input);
    const to = toWorkPackageState(data.to);
    return this.gatedTransaction(slug, sequence, data.actor, async (tx, passGates) => {
      const feature = await this.featureIn(tx, slug);
      const wp = await this.workPackageIn(tx, feature, sequence);
      assertWorkPackageMove(wp.state, to);
      const transition = transitionString(wp.state, to);
      if (to === 'DOING') await assertPrerequisitesDone(tx, feature, wp);
      await checkEvidenceRefs(tx, feature, wp, data.evidence_refs);
      const used = await passGates({ feature, workPackage: wp, transitions: [transition] }, transition);
      const updated = await tx.updateWorkPackage(wp.id, { state: to, updated_at: isoNow(this.clock) });
      const entry = await this.audit.append(tx, slug, {
        feature_slug: slug,
        wp_sequence: sequence,
        actor: data.actor,
        transition,
        evidence_refs: union(used, data.evidence_refs),
        action: 'transition',
      });
      return { feature, work_package: updated, from: wp.state, to, entry };
    });
  }

  /** The work packages in dependency waves (topological layers; shared files ordered by sequence). */
  async waves(slug: string): Promise<number[][]> {
    return computeWaves(await this.listWorkPackages(slug));
  }

  /** PLANNED packages whose prerequisites are all DONE: what can start now. */
  async readyWorkPackages(slug: string): Promise<WorkPackage[]> {
    const all = await this.listWorkPackages(slug);
    const deps = effectiveDependencies(all);
    const done = new Set(all.filter((w) => w.state === 'DONE').map((w) => w.sequence));
    return all.filter((w) => w.state === 'PLANNED' && [...(deps.get(w.sequence) ?? [])].every((d) => done.has(d)));
  }

  // ---- governance ----

  /**
   * Checks the gates of a move without applying it. Without `to`, checks
   * the next step (features) or the natural next move (work packages).
   * `verbose` adds the ids of the rules that were checked (`checked_rules`).
   */
  async checkGovernance(
    slug: string,
    options: { wp_sequence?: number; to?: string; verbose?: boolean } = {},
  ): Promise<GateResult & { transition: string; checked_rules?: string[] }> {
    const feature = await this.getFeature(slug);
    await this.governance.ready();
    const reader: WorkflowReader = this.store.reader;
    const ruleOverrides = await this.governance.featureOverrides(slug, reader);
    if (options.wp_sequence !== undefined) {
      const wp = await reader.getWorkPackage(feature.id, options.wp_sequence);
      if (!wp) throw new NotFoundError('work package', `${slug}/${options.wp_sequence}`);
      const next = options.to !== undefined ? toWorkPackageState(options.to) : NEXT_WP_STATE[wp.state];
      if (!next) throw new WorkflowError('invalid_transition', `work package ${wp.sequence} is ${wp.state}; it has no next move`);
      assertWorkPackageMove(wp.state, next);
      const transition = transitionString(wp.state, next);
      const gate = await evaluateGates(reader, { feature, workPackage: wp, transitions: [transition], ruleOverrides });
      return {
        passed: gate.passed,
        violations: gate.violations,
        transition,
        ...(options.verbose ? { checked_rules: gate.checkedRules } : {}),
      };
    }
    const index = FEATURE_STATES.indexOf(feature.state);
    const to = options.to !== undefined ? toFeatureState(options.to) : FEATURE_STATES[index + 1];
    if (!to) throw new WorkflowError('invalid_transition', `feature ${slug} is ${feature.state}, the end of its lifecycle`);
    const plan = planFeatureMove(feature.state, to, true);
    const gate = await evaluateGates(reader, {
      feature,
      transitions: plan.steps.map((s) => transitionString(s.from, s.to)),
      ruleOverrides,
    });
    return {
      passed: gate.passed,
      violations: gate.violations,
      transition: transitionString(feature.state, to),
      ...(options.verbose ? { checked_rules: gate.checkedRules } : {}),
    };
  }

  // ---- helpers ----

  /** Loads a feature inside a transaction or throws `not_found`. */
  async featureIn(tx: WorkflowReader, slug: string): Promise<Feature> {
    const feature = await tx.getFeature(slug);
    if (!feature) throw new NotFoundError('feature', slug);
    return feature;
  }

  async workPackageIn(tx: WorkflowReader, feature: Feature, sequence: number): Promise<WorkPackage> {
    const wp = await tx.getWorkPackage(feature.id, sequence);
    if (!wp) throw new NotFoundError('work package', `${feature.slug}/${sequence}`);
    return wp;
  }

  /**
   * Runs a transition in one transaction under the feature's lock. `passGates`
   * evaluates the gates and throws `GateFailedError` (emitting
   * `workflow:gate_failed`) when they fail; success emits `workflow:transition`.
   */
  private async gatedTransaction<T extends { from: string; to: string }>(
    slug: string,
    wpSequence: number | null,
    actor: string,
    work: (tx: WorkflowTx, passGates: (subject: GateSubject, transition: string) => Promise<number[]>) => Promise<T>,
  ): Promise<T> {
    // Built-in rules are seeded once per process, outside the transition's transaction.
    await this.governance.ready();
    let failed: { transition: string; gate: GateEvaluation } | undefined;
    try {
      const result = await this.store.transact(async (tx) => {
        await tx.lock(slug);
        return work(tx, async (subject, transition) => {
          const gate = await evaluateGates(tx, { ...subject, ruleOverrides: await this.governance.featureOverrides(slug, tx) });
          if (!gate.passed) {
            failed = { transition, gate };
            throw new GateFailedError(transition, gate.violations);
          }
          return gate.evidenceRefs;
        });
      });
      this.events.emit('workflow:transition', {
        featureSlug: slug,
        wpSequence,
        from: result.from,
        to: result.to,
        actor,
        at: this.clock.now(),
      });
      return result;
    } catch (error) {
      if (failed) {
        this.emitGateFailed(slug, wpSequence, failed.transition, failed.gate);
        await this.recordRefusal(slug, wpSequence, actor, failed.transition, failed.gate).catch(() => undefined);
      }
      throw error;
    }
  }

  /**
   * A refused move is part of the feature's history (a retrospective counts them): it is recorded as staying
   * put, in a transaction of its own, since the move's own transaction rolled back.
   */
  private async recordRefusal(slug: string, wpSequence: number | null, actor: string, attempted: string, gate: GateEvaluation) {
    const from = attempted.split(' -> ')[0]!;
    await this.store.transact(async (tx) => {
      await tx.lock(slug);
      await this.audit.append(tx, slug, {
        feature_slug: slug,
        wp_sequence: wpSequence,
        actor,
        transition: transitionString(from, from),
        evidence_refs: [],
        action: 'gate_refused',
        detail: { attempted, rule_ids: [...new Set(gate.violations.map((v) => v.rule_id))] },
      });
    });
  }

  private emitGateFailed(slug: string, wpSequence: number | null, transition: string, gate: GateEvaluation): void {
    const ruleIds = [...new Set(gate.violations.map((v) => v.rule_id))];
    this.events.emit('workflow:gate_failed', { featureSlug: slug, wpSequence, transition, ruleIds, at: this.clock.now() });
  }
}

function union(a: readonly number[], b: readonly number[]): number[] {
  return [...new Set([...a, ...b])].sort((x, y) => x - y);
}

function stripUndefined<T extends Record<string, unknown>>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}

export { FEATURE_COMMANDS };
