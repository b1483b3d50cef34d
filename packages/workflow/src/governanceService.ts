/**
 * @module governanceService
 * Rule administration: the built-in rules are seeded into the store once,
 * admins (named in the config) enable, disable or reset them and define
 * their own, and every such change is appended to the `_governance` audit
 * chain in the same transaction.
 */
import { type AuditTrail, GOVERNANCE_CHAIN } from './audit/auditTrail.js';
import { defaultRules } from './domain/governance.js';
import { type DefineRuleInput, defineRuleInput, parseInput } from './domain/inputs.js';
import { actorSchema, type GovernanceRule } from './domain/model.js';
import { NotFoundError, WorkflowError } from './errors.js';
import type { WorkflowReader, WorkflowStore, WorkflowTx } from './store/workflowStore.js';
import { type Clock, isoNow } from './util/clock.js';

/** What `enforce` does to a rule. */
export type EnforceAction = 'enable' | 'disable' | 'reset';

/** A rule as one feature sees it: `enabled` is the effective setting, `override` the feature's own (null: the global one). */
export type FeatureRuleSetting = GovernanceRule & { feature_slug: string; global_enabled: boolean; override: boolean | null };

function assertAction(action: string): asserts action is EnforceAction {
  if (!['enable', 'disable', 'reset'].includes(action)) {
    throw new WorkflowError('invalid_argument', `action: one of enable, disable, reset; got ${JSON.stringify(action)}`, {
      details: { field: 'action' },
    });
  }
}

/** Rule administration over a store. */
export class GovernanceService {
  private seeded: Promise<void> | undefined;
  private readonly admins: Set<string>;

  constructor(
    private readonly store: WorkflowStore,
    private readonly audit: AuditTrail,
    private readonly clock: Clock,
    admins: readonly string[],
  ) {
    this.admins = new Set(admins);
  }

  /** Seeds the built-in rules inside a transaction (idempotent: existing rules keep their state). */
  async ensureRules(tx: WorkflowTx): Promise<void> {
    for (const rule of defaultRules(isoNow(this.clock))) await tx.seedRule(rule);
  }

  /** Seeds the built-in rules once per process. */
  ready(): Promise<void> {
    this.seeded ??= this.store
      .transact((tx) => this.ensureRules(tx))
      .catch((error) => {
        this.seeded = undefined;
        throw error;
      });
    return this.seeded;
  }

  async listRules(): Promise<GovernanceRule[]> {
    await this.ready();
    return this.store.reader.listRules();
  }

  /**
   * Enables, disables or resets (to its default) a rule. Admins only;
   * recorded in the `_governance` chain as `ENABLED -> DISABLED` and so on.
   *
   * @example
   * ```ts
   * await workflow.governance.enforce('feature-coverage-minimum', 'enable', 'lead');
   * ```
   */
  async enforce(ruleId: string, action: EnforceAction, actor: string): Promise<GovernanceRule> {
    this.assertAdmin(actor);
    assertAction(action);
    await this.ready();
    return this.store.transact(async (tx) => {
      await tx.lock(GOVERNANCE_CHAIN);
      const rule = await tx.getRule(ruleId);
      if (!rule) throw new NotFoundError('governance rule', ruleId);
      const enabled = action === 'reset' ? rule.default_enabled : action === 'enable';
      const updated: GovernanceRule = { ...rule, enabled, updated_at: isoNow(this.clock), updated_by: actor };
      await tx.putRule(updated);
      const label = (on: boolean) => (on ? 'ENABLED' : 'DISABLED');
      await this.audit.append(tx, GOVERNANCE_CHAIN, {
        feature_slug: null,
        wp_sequence: null,
        actor,
        transition: `${label(rule.enabled)} -> ${label(enabled)}`,
        evidence_refs: [],
        action: 'rule_enforced',
        detail: { rule_id: ruleId, enforce: action },
      });
      return updated;
    });
  }

  /**
   * Enables or disables rule `ruleId` for one feature alone, or `reset`s it to the rule's
   * global setting. Admins only. The feature's own audit chain holds the setting: each change
   * is an entry there (`rule_enforced`, `detail.enabled` true, false or null for reset), in the
   * same transaction, under the feature's lock, so a gate check sees it with the audit trail
   * that proves it.
   *
   * @example
   * ```ts
   * await workflow.governance.enforceForFeature('001-login', 'wp-ci-before-review', 'disable', 'lead');
   * ```
   */
  async enforceForFeature(slug: string, ruleId: string, action: EnforceAction, actor: string): Promise<FeatureRuleSetting> {
    this.assertAdmin(actor);
    assertAction(action);
    await this.ready();
    return this.store.transact(async (tx) => {
      await tx.lock(slug);
      if (!(await tx.getFeature(slug))) throw new NotFoundError('feature', slug);
      const rule = await tx.getRule(ruleId);
      if (!rule) throw new NotFoundError('governance rule', ruleId);
      const before = (await this.featureOverrides(slug, tx)).get(ruleId);
      const override = action === 'reset' ? null : action === 'enable';
      const label = (on: boolean | undefined | null) => (on === undefined || on === null ? 'GLOBAL' : on ? 'ENABLED' : 'DISABLED');
      await this.audit.append(tx, slug, {
        feature_slug: slug,
        wp_sequence: null,
        actor,
        transition: `${label(before)} -> ${label(override)}`,
        evidence_refs: [],
        action: 'rule_enforced',
        detail: { rule_id: ruleId, enforce: action, enabled: override },
      });
      return { ...rule, feature_slug: slug, enabled: override ?? rule.enabled, global_enabled: rule.enabled, override };
    });
  }

  /**
   * A feature's own rule settings, from its audit chain: rule id to enabled, for the rules
   * `enforceForFeature` set and did not reset since. Read through `reader`: a transition's
   * transaction, so the gate sees the settings as of the move under the feature's lock.
   */
  async featureOverrides(slug: string, reader: WorkflowReader = this.store.reader): Promise<Map<string, boolean>> {
    const overrides = new Map<string, boolean>();
    for (const entry of await reader.auditEntries(slug)) {
      const e = entry as unknown as { action?: string; detail?: { rule_id?: unknown; enabled?: unknown } };
      if (e.action !== 'rule_enforced' || typeof e.detail?.rule_id !== 'string') continue;
      if (typeof e.detail.enabled === 'boolean') overrides.set(e.detail.rule_id, e.detail.enabled);
      else overrides.delete(e.detail.rule_id);
    }
    return overrides;
  }

  /** A rule as it applies to one feature (read-only; anyone may ask). */
  async featureRule(slug: string, ruleId: string): Promise<FeatureRuleSetting> {
    await this.ready();
    if (!(await this.store.reader.getFeature(slug))) throw new NotFoundError('feature', slug);
    const rule = await this.store.reader.getRule(ruleId);
    if (!rule) throw new NotFoundError('governance rule', ruleId);
    const override = (await this.featureOverrides(slug)).get(ruleId) ?? null;
    return { ...rule, feature_slug: slug, enabled: override ?? rule.enabled, global_enabled: rule.enabled, override };
  }

  /** Adds or replaces a custom rule (admins only, audited). Built-in rules can only be enforced, not redefined. */
  async defineRule(input: DefineRuleInput, actor: string): Promise<GovernanceRule> {
    this.assertAdmin(actor);
    const data = parseInput(defineRuleInput, input);
    await this.ready();
    return this.store.transact(async (tx) => {
      await tx.lock(GOVERNANCE_CHAIN);
      const existing = await tx.getRule(data.rule_id);
      if (existing?.builtin)
        throw new WorkflowError('already_exists', `${data.rule_id} is a built-in rule; enforce it instead`, {
          details: { field: 'rule_id' },
        });
      const rule: GovernanceRule = {
        ...data,
        default_enabled: data.enabled,
        builtin: false,
        updated_at: isoNow(this.clock),
        updated_by: actor,
      };
      await tx.putRule(rule);
      await this.audit.append(tx, GOVERNANCE_CHAIN, {
        feature_slug: null,
        wp_sequence: null,
        actor,
        transition: `${existing ? 'DEFINED' : 'NONE'} -> DEFINED`,
        evidence_refs: [],
        action: 'rule_defined',
        detail: { rule_id: rule.rule_id, transition: rule.transition, scope: rule.scope },
      });
      return rule;
    });
  }

  /**
   * Makes `names` admins too. A server serving this workflow calls it with the names of its keys marked
   * `admin`, since a caller with such a key acts under the key's name.
   */
  admitAdmins(names: Iterable<string>): void {
    for (const name of names) this.admins.add(name);
  }

  /** True when `actor` may administer rules. */
  isAdmin(actor: string): boolean {
    return this.admins.has(actor);
  }

  private assertAdmin(actor: string): void {
    actorSchema.parse(actor);
    if (!this.admins.has(actor)) {
      throw new WorkflowError('forbidden', `${actor} is not a governance admin; admins are named in the workflow config`, {
        details: { actor },
      });
    }
  }
}
