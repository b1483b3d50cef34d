/**
 * @module inputs
 * zod schemas of the workflow's inputs (the bodies the HTTP and gRPC
 * surfaces accept, and the CLI's options), and the one place zod issues
 * become `InvalidArgumentError`s naming the field.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../errors.js';
import { actorSchema, EVIDENCE_TYPES, governanceRuleSchema, slugSchema } from './model.js';

/** A repository-relative path: no absolute paths, no `..`, no NUL. */
export const relativePathSchema = z
  .string()
  .min(1)
  .max(1024)
  .refine(
    (p) => !p.includes('\0') && !p.startsWith('/') && !/^[A-Za-z]:/.test(p) && !p.split(/[\\/]/).includes('..'),
    'must be a relative path inside the repository (no "..", not absolute)',
  );

export const createFeatureInput = z.object({
  slug: slugSchema,
  title: z.string().min(1).max(200),
  description: z.string().max(100_000).default(''),
  target_branch: z.string().min(1).max(200).default('main'),
  actor: actorSchema,
});
export type CreateFeatureInput = z.input<typeof createFeatureInput>;

export const updateFeatureInput = z.object({
  title: z.string().min(1).max(200).optional(),
  description: z.string().max(100_000).optional(),
  target_branch: z.string().min(1).max(200).optional(),
  actor: actorSchema,
});
export type UpdateFeatureInput = z.input<typeof updateFeatureInput>;

export const transitionInput = z.object({
  /** Target state, upper or lower case. */
  to: z.string().min(1),
  /** Targets a work package instead of the feature. */
  wp_sequence: z.number().int().positive().optional(),
  actor: actorSchema,
  /** Feature moves only: allow skipping steps (recorded). */
  force: z.boolean().default(false),
  /** Evidence ids to cite in the audit entry (must belong to the target). */
  evidence_refs: z.array(z.number().int().positive()).default([]),
});
export type TransitionInput = z.input<typeof transitionInput>;

export const createWorkPackageInput = z.object({
  title: z.string().min(1).max(200),
  depends_on: z.array(z.number().int().positive()).default([]),
  file_scope: z.array(relativePathSchema).default([]),
  agent_id: z.string().max(200).nullable().default(null),
  actor: actorSchema,
});
export type CreateWorkPackageInput = z.input<typeof createWorkPackageInput>;

export const updateWorkPackageInput = z.object({
  title: z.string().min(1).max(200).optional(),
  depends_on: z.array(z.number().int().positive()).optional(),
  file_scope: z.array(relativePathSchema).optional(),
  agent_id: z.string().max(200).nullable().optional(),
  pr_url: z.string().max(2000).nullable().optional(),
  actor: actorSchema,
});
export type UpdateWorkPackageInput = z.input<typeof updateWorkPackageInput>;

export const attachEvidenceInput = z.object({
  wp_sequence: z.number().int().positive().optional(),
  type: z.enum(EVIDENCE_TYPES),
  reference: z.string().min(1).max(2000),
  summary: z.string().max(10_000).default(''),
  passed: z.boolean().nullable().default(null),
  data: z.record(z.string(), z.unknown()).default({}),
  actor: actorSchema,
});
export type AttachEvidenceInput = z.input<typeof attachEvidenceInput>;

export const recordMetricInput = z.object({
  wp_sequence: z.number().int().positive().optional(),
  name: z.string().regex(/^[a-z][a-z0-9_.]{0,63}$/, 'a metric name is lower-case letters, digits, dots and underscores'),
  value: z.number().finite(),
  actor: actorSchema,
});
export type RecordMetricInput = z.input<typeof recordMetricInput>;

export const addContractInput = z.object({
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'a contract name is lower-case letters, digits, dots, dashes')
    .default('spec'),
  content: z.string().max(5_000_000),
  actor: actorSchema,
});
export type AddContractInput = z.input<typeof addContractInput>;

export const defineRuleInput = governanceRuleSchema
  .pick({
    rule_id: true,
    transition: true,
    scope: true,
    domain: true,
    description: true,
    required_evidence: true,
    thresholds: true,
    remediation: true,
  })
  .extend({
    require_work_packages_done: z.boolean().default(false),
    enabled: z.boolean().default(true),
    description: z.string().default(''),
    remediation: z.string().default(''),
    required_evidence: governanceRuleSchema.shape.required_evidence.default([]),
    thresholds: governanceRuleSchema.shape.thresholds.default([]),
    domain: governanceRuleSchema.shape.domain.default('custom'),
  });
export type DefineRuleInput = z.input<typeof defineRuleInput>;

/**
 * Parses `value` with `schema`; the first issue becomes an
 * `InvalidArgumentError` whose field is the issue's path.
 *
 * @example
 * ```ts
 * const input = parseInput(createFeatureInput, { slug: 'login', title: 'Login', actor: 'alice' });
 * ```
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, prefix?: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.map(String).join('.');
  const field = [prefix, path].filter(Boolean).join('.') || prefix || 'input';
  throw new InvalidArgumentError(field, issueMessage(issue, value), { cause: result.error });
}

/**
 * zod words a missing value as "Invalid input: expected string, received undefined" and a
 * word where a number belongs as "received NaN" (after coercion); say "required", or what
 * was expected and what was given, as the caller wrote it.
 */
function issueMessage(issue: z.core.$ZodIssue, value: unknown): string {
  if (issue.code !== 'invalid_type') return issue.message;
  let given: unknown = value;
  for (const key of issue.path)
    given = given !== null && typeof given === 'object' ? (given as Record<PropertyKey, unknown>)[key] : undefined;
  if (given === undefined) return 'required';
  const expected = issue.expected === 'int' ? 'integer' : issue.expected;
  const shown = (JSON.stringify(given) ?? String(given)).slice(0, 80);
  return `expected ${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}; got ${shown}`;
}
