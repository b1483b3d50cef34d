/**
 * @module model
 * The workflow's records and their states, as zod schemas (exported for the
 * surfaces, which validate request bodies with them) and the types derived
 * from them. Field names are snake_case because they are also the wire
 * format of the CLI, HTTP and gRPC surfaces.
 */
import { z } from 'zod';

/** Feature lifecycle, in order. Each command moves one step forward. */
export const FEATURE_STATES = [
  'CREATED',
  'SPECIFIED',
  'RESEARCHED',
  'PLANNED',
  'IMPLEMENTING',
  'VALIDATED',
  'SHIPPED',
  'RETROSPECTED',
] as const;
export type FeatureState = (typeof FEATURE_STATES)[number];

/** Work-package states. */
export const WP_STATES = ['PLANNED', 'DOING', 'REVIEW', 'DONE', 'BLOCKED'] as const;
export type WorkPackageState = (typeof WP_STATES)[number];

/** Evidence types a governance rule can require. */
export const EVIDENCE_TYPES = [
  'test_result',
  'ci_output',
  'review_approval',
  'security_scan',
  'lint_result',
  'manual_attestation',
] as const;
export type EvidenceType = (typeof EVIDENCE_TYPES)[number];

/** Policy domains of governance rules. */
export const POLICY_DOMAINS = ['security', 'quality', 'compliance', 'performance', 'custom'] as const;
export type PolicyDomain = (typeof POLICY_DOMAINS)[number];

/** A feature slug: lower-case letters, digits and dashes, starting with a letter or digit, at most 64 characters. */
export const slugSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'a slug is 1-64 lower-case letters, digits and dashes, starting with a letter or digit');

/** An actor name: one line, 1-128 characters. */
export const actorSchema = z
  .string()
  .min(1, 'actor is required')
  .max(128)
  .regex(/^[^\r\n\0]+$/, 'actor must be one line');

export const featureSchema = z.object({
  id: z.number().int().positive(),
  slug: slugSchema,
  title: z.string(),
  description: z.string(),
  state: z.enum(FEATURE_STATES),
  target_branch: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Feature = z.infer<typeof featureSchema>;

export const workPackageSchema = z.object({
  id: z.number().int().positive(),
  feature_id: z.number().int().positive(),
  sequence: z.number().int().positive(),
  title: z.string(),
  state: z.enum(WP_STATES),
  /** Sequences (within the feature) this package waits for. */
  depends_on: z.array(z.number().int().positive()),
  /** Repository-relative paths (files or directories) the package touches. */
  file_scope: z.array(z.string()),
  agent_id: z.string().nullable(),
  pr_url: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type WorkPackage = z.infer<typeof workPackageSchema>;

export const evidenceSchema = z.object({
  id: z.number().int().positive(),
  feature_id: z.number().int().positive(),
  wp_id: z.number().int().positive().nullable(),
  type: z.enum(EVIDENCE_TYPES),
  /** Where the evidence lives: a URL, an artifact path, a CI run id. */
  reference: z.string(),
  summary: z.string(),
  /** `false` for a failing run: failing evidence never satisfies a rule. `null` when not applicable. */
  passed: z.boolean().nullable(),
  data: z.record(z.string(), z.unknown()),
  actor: z.string(),
  created_at: z.string(),
});
export type Evidence = z.infer<typeof evidenceSchema>;

export const metricSchema = z.object({
  id: z.number().int().positive(),
  name: z.string(),
  value: z.number(),
  feature_id: z.number().int().positive(),
  wp_id: z.number().int().positive().nullable(),
  recorded_at: z.string(),
});
export type Metric = z.infer<typeof metricSchema>;

/** A bound on the latest value of a metric. */
export const thresholdSchema = z
  .object({
    metric: z.string().min(1),
    min: z.number().optional(),
    max: z.number().optional(),
  })
  .refine((t) => t.min !== undefined || t.max !== undefined, 'a threshold needs min or max');
export type Threshold = z.infer<typeof thresholdSchema>;

/** A transition string, `"<FROM> -> <TO>"`, e.g. `DOING -> REVIEW`. */
export const transitionStringSchema = z.string().regex(/^[A-Z_]+ -> [A-Z_]+$/, 'a transition reads "<FROM> -> <TO>"');

/** A governance (policy) rule: what a transition needs before it applies. */
export const governanceRuleSchema = z.object({
  rule_id: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'a rule id is lower-case letters, digits, dots, dashes, underscores'),
  /** The transition this rule guards. */
  transition: transitionStringSchema,
  /** Whether the rule guards feature or work-package transitions. */
  scope: z.enum(['feature', 'work_package']),
  domain: z.enum(POLICY_DOMAINS),
  description: z.string(),
  required_evidence: z.array(z.enum(EVIDENCE_TYPES)),
  thresholds: z.array(thresholdSchema),
  /** Feature rules only: every work package must be DONE. */
  require_work_packages_done: z.boolean(),
  remediation: z.string(),
  enabled: z.boolean(),
  default_enabled: z.boolean(),
  builtin: z.boolean(),
  updated_at: z.string(),
  updated_by: z.string(),
});
export type GovernanceRule = z.infer<typeof governanceRuleSchema>;

/** A versioned contract (spec, API contract, acceptance criteria) of a feature. */
export const contractSchema = z.object({
  id: z.number().int().positive(),
  feature_id: z.number().int().positive(),
  version: z.number().int().positive(),
  name: z.string(),
  content: z.string(),
  content_hash: z.string(),
  actor: z.string(),
  created_at: z.string(),
});
export type Contract = z.infer<typeof contractSchema>;

/** What the workflow writes into each audit entry besides the chain's own fields. */
export type AuditAction =
  | 'feature_created'
  | 'feature_updated'
  | 'transition'
  | 'work_package_created'
  | 'work_package_updated'
  | 'evidence_attached'
  | 'metric_recorded'
  | 'contract_versioned'
  | 'rule_enforced'
  | 'rule_defined'
  /** A move the gates refused (recorded as staying put; `detail` names the move and the rules). */
  | 'gate_refused';

/** An entry of a feature's audit trail. */
export interface AuditTrailEntry {
  id: number;
  feature_slug: string;
  wp_sequence: number | null;
  timestamp: string;
  actor: string;
  transition: string;
  evidence_refs: number[];
  prev_hash: string;
  hash: string;
  action: AuditAction;
  forced?: boolean;
  detail?: Record<string, unknown>;
}

/** Result of checking a chain. */
export interface AuditVerification {
  valid: boolean;
  entries_verified: number;
  first_invalid_id: number | null;
  error_message: string | null;
}

/** `{passed, violations}` of a governance check. */
export interface GateResult {
  passed: boolean;
  violations: { rule_id: string; message: string; remediation: string }[];
}
