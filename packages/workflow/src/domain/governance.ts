/**
 * @module governance
 * Governance gates. A rule guards one transition of features or of work
 * packages and requires evidence (of given types, not failing) and metric
 * thresholds. A transition applies only when the state machine allows it
 * and every enabled rule on it passes. Sensible rules ship built in;
 * `enforce` (admins only, audited) enables, disables or resets them.
 */
import type { WorkflowReader } from '../store/workflowStore.js';
import type { Evidence, Feature, GateResult, GovernanceRule, Threshold, WorkPackage } from './model.js';

type RuleSeed = Omit<GovernanceRule, 'enabled' | 'updated_at' | 'updated_by' | 'builtin'>;

const seeds: RuleSeed[] = [
  {
    rule_id: 'wp-ci-before-review',
    transition: 'DOING -> REVIEW',
    scope: 'work_package',
    domain: 'quality',
    description: 'A work package goes to review only with CI output that did not fail.',
    required_evidence: ['ci_output'],
    thresholds: [],
    require_work_packages_done: false,
    remediation: 'Run CI on the branch and attach its output as ci_output evidence to the work package.',
    default_enabled: true,
  },
  {
    rule_id: 'wp-review-approval-before-done',
    transition: 'REVIEW -> DONE',
    scope: 'work_package',
    domain: 'quality',
    description: 'A work package is done only once a reviewer approved it.',
    required_evidence: ['review_approval'],
    thresholds: [],
    require_work_packages_done: false,
    remediation: 'Get the change reviewed and attach the approval as review_approval evidence.',
    default_enabled: true,
  },
  {
    rule_id: 'wp-lint-before-review',
    transition: 'DOING -> REVIEW',
    scope: 'work_package',
    domain: 'quality',
    description: 'A work package goes to review only with a clean lint run.',
    required_evidence: ['lint_result'],
    thresholds: [],
    require_work_packages_done: false,
    remediation: 'Run the linter and attach its result as lint_result evidence.',
    default_enabled: false,
  },
  {
    rule_id: 'feature-work-packages-done',
    transition: 'IMPLEMENTING -> VALIDATED',
    scope: 'feature',
    domain: 'quality',
    description: 'A feature is validated only when all its work packages are DONE.',
    required_evidence: [],
    thresholds: [],
    require_work_packages_done: true,
    remediation: 'Finish (or re-plan) the open work packages first.',
    default_enabled: true,
  },
  {
    rule_id: 'feature-tests-before-validated',
    transition: 'IMPLEMENTING -> VALIDATED',
    scope: 'feature',
    domain: 'quality',
    description: 'A feature is validated only with a passing test run.',
    required_evidence: ['test_result'],
    thresholds: [],
    require_work_packages_done: false,
    remediation: 'Run the test suite and attach the result as test_result evidence to the feature.',
    default_enabled: true,
  },
  {
    rule_id: 'feature-coverage-minimum',
    transition: 'IMPLEMENTING -> VALIDATED',
    scope: 'feature',
    domain: 'quality',
    description: 'Line coverage of at least 80 % before validation.',
    required_evidence: [],
    thresholds: [{ metric: 'coverage', min: 80 }],
    require_work_packages_done: false,
    remediation: 'Add tests until coverage reaches the minimum, then record the coverage metric.',
    default_enabled: false,
  },
  {
    rule_id: 'feature-security-scan-before-ship',
    transition: 'VALIDATED -> SHIPPED',
    scope: 'feature',
    domain: 'security',
    description: 'A feature ships only after a security scan that did not fail.',
    required_evidence: ['security_scan'],
    thresholds: [],
    require_work_packages_done: false,
    remediation: 'Run the security scanner and attach its report as security_scan evidence.',
    default_enabled: true,
  },
  {
    rule_id: 'feature-attestation-before-ship',
    transition: 'VALIDATED -> SHIPPED',
    scope: 'feature',
    domain: 'compliance',
    description: 'A named person attests the release before it ships.',
    required_evidence: ['manual_attestation'],
    thresholds: [],
    require_work_packages_done: false,
    remediation: 'Have the release owner attach a manual_attestation.',
    default_enabled: false,
  },
];

/**
 * The rules that ship, enabled as their `default_enabled` says.
 *
 * @example
 * ```ts
 * defaultRules('2026-01-01T00:00:00.000Z').filter((r) => r.enabled).map((r) => r.rule_id);
 * ```
 */
export function defaultRules(now: string): GovernanceRule[] {
  return seeds.map((s) => ({ ...s, enabled: s.default_enabled, builtin: true, updated_at: now, updated_by: 'system' }));
}

/** What a gate check looks at. */
export interface GateSubject {
  feature: Feature;
  /** Set for work-package transitions. */
  workPackage?: WorkPackage;
  /** Every single step the move passes through (`"A -> B"`), in order. */
  transitions: string[];
  /** This feature's own setting of rules (`governance:enforce --feature-slug`), over each rule's global one. */
  ruleOverrides?: ReadonlyMap<string, boolean>;
}

/** The check result plus the evidence that satisfied the rules (for the audit entry). */
export interface GateEvaluation extends GateResult {
  evidenceRefs: number[];
  /** Ids of the rules that were checked. */
  checkedRules: string[];
}

function thresholdViolation(rule: GovernanceRule, t: Threshold, value: number | undefined, where: string) {
  const bound = [t.min !== undefined ? `at least ${t.min}` : '', t.max !== undefined ? `at most ${t.max}` : '']
    .filter(Boolean)
    .join(' and ');
  if (value === undefined) {
    return {
      rule_id: rule.rule_id,
      message: `no ${t.metric} metric is recorded for ${where} (needs ${bound})`,
      remediation: rule.remediation,
    };
  }
  if ((t.min !== undefined && value < t.min) || (t.max !== undefined && value > t.max)) {
    return { rule_id: rule.rule_id, message: `${t.metric} is ${value} for ${where}; it must be ${bound}`, remediation: rule.remediation };
  }
  return undefined;
}

/**
 * Checks every enabled rule guarding the subject's transitions (enabled for this feature:
 * its own setting when it has one, else the rule's global one).
 * Evidence counts when it is attached to the target itself (the work
 * package, or the feature for feature rules) and did not fail.
 */
export async function evaluateGates(reader: WorkflowReader, subject: GateSubject): Promise<GateEvaluation> {
  const scope = subject.workPackage ? 'work_package' : 'feature';
  const enabled = (r: GovernanceRule) => subject.ruleOverrides?.get(r.rule_id) ?? r.enabled;
  const rules = (await reader.listRules()).filter((r) => enabled(r) && r.scope === scope && subject.transitions.includes(r.transition));
  const violations: GateResult['violations'] = [];
  const used = new Set<number>();
  if (rules.length === 0) return { passed: true, violations, evidenceRefs: [], checkedRules: [] };
  const wp = subject.workPackage;
  const where = wp ? `work package ${wp.sequence} of ${subject.feature.slug}` : `feature ${subject.feature.slug}`;
  const evidence: Evidence[] = await reader.listEvidence({ featureId: subject.feature.id, wpId: wp ? wp.id : null });
  const metrics = await reader.listMetrics(subject.feature.id, wp ? wp.id : null);
  const featureMetrics = wp ? await reader.listMetrics(subject.feature.id, null) : metrics;
  const latest = (name: string) => {
    // The latest value on the target wins; a work package falls back to its feature's metric.
    const own = metrics.filter((m) => m.name === name);
    const pool = own.length > 0 ? own : featureMetrics.filter((m) => m.name === name);
    return pool.length > 0 ? pool[pool.length - 1]!.value : undefined;
  };
  for (const rule of rules) {
    for (const type of rule.required_evidence) {
      const ofType = evidence.filter((e) => e.type === type);
      const good = ofType.filter((e) => e.passed !== false);
      if (good.length > 0) {
        for (const e of good) used.add(e.id);
        continue;
      }
      const message =
        ofType.length > 0
          ? `the ${type} evidence for ${where} failed (${ofType.map((e) => `#${e.id}`).join(', ')})`
          : `${where} has no ${type} evidence`;
      violations.push({ rule_id: rule.rule_id, message, remediation: rule.remediation });
    }
    for (const t of rule.thresholds) {
      const v = thresholdViolation(rule, t, latest(t.metric), where);
      if (v) violations.push(v);
    }
    if (rule.require_work_packages_done && !wp) {
      const open = (await reader.listWorkPackages(subject.feature.id)).filter((w) => w.state !== 'DONE');
      if (open.length > 0) {
        violations.push({
          rule_id: rule.rule_id,
          message: `work packages not DONE: ${open.map((w) => `${w.sequence} (${w.state})`).join(', ')}`,
          remediation: rule.remediation,
        });
      }
    }
  }
  return {
    passed: violations.length === 0,
    violations,
    evidenceRefs: [...used].sort((a, b) => a - b),
    checkedRules: rules.map((r) => r.rule_id),
  };
}
