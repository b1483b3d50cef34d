/**
 * @module workflowSchemas
 * The workflow API's request and response schemas for `/openapi.json`.
 * Request bodies are the workflow's own input schemas (the domain validates
 * with the same ones); responses reuse its record schemas.
 */
import { z } from '@hono/zod-openapi';
import { JOB_STATES } from '@switchyard/workflow';
import {
  createFeatureInput,
  createWorkPackageInput,
  featureSchema,
  slugSchema,
  transitionInput,
  workPackageSchema,
} from '@switchyard/workflow/domain';

export const errorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'gate_failed' }),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .openapi('Error');

export const violationSchema = z.object({ rule_id: z.string(), message: z.string(), remediation: z.string() }).openapi('Violation');

export const gateFailedSchema = z
  .object({
    error: z.object({
      code: z.literal('gate_failed'),
      message: z.string(),
      details: z.object({ transition: z.string(), violations: z.array(violationSchema) }),
    }),
  })
  .openapi('GateFailed');

export const auditEntrySchema = z
  .object({
    id: z.number().int(),
    feature_slug: z.string().nullable(),
    wp_sequence: z.number().int().nullable(),
    timestamp: z.string(),
    actor: z.string(),
    transition: z.string().openapi({ example: 'DOING -> REVIEW' }),
    evidence_refs: z.array(z.number().int()),
    action: z.string(),
    prev_hash: z.string(),
    hash: z.string(),
    forced: z.boolean().optional(),
    detail: z.record(z.string(), z.unknown()).optional(),
  })
  .passthrough()
  .openapi('AuditEntry');

export const verificationSchema = z
  .object({
    valid: z.boolean(),
    entries_verified: z.number().int(),
    first_invalid_id: z.number().int().nullable(),
    error_message: z.string().nullable(),
    error_code: z.string().nullable(),
    root: z.string(),
    origin: z.string(),
  })
  .openapi('AuditVerification');

// zod 4 puts methods on each schema when it is built, so schemas the workflow built before
// @hono/zod-openapi loaded have no `.openapi()`: name copies of their shapes instead.
export const feature = z.object(featureSchema.shape).openapi('Feature');
export const workPackage = z.object(workPackageSchema.shape).openapi('WorkPackage');

export const createFeatureBody = z.object(createFeatureInput.shape).openapi('CreateFeature');
export const createWorkPackageBody = z.object(createWorkPackageInput.shape).openapi('CreateWorkPackage');
export const transitionBody = z.object(transitionInput.shape).openapi('Transition', {
  example: { to: 'REVIEW', wp_sequence: 1, actor: 'alice', evidence_refs: [] },
});

export const transitionResult = z
  .object({
    feature_slug: z.string(),
    wp_sequence: z.number().int().nullable(),
    from: z.string(),
    to: z.string(),
    state: z.string().openapi({ description: 'the new state of the feature or work package' }),
    skipped: z.array(z.string()),
    feature,
    work_package: workPackage.nullable(),
    entry: auditEntrySchema,
  })
  .openapi('TransitionResult');

export const gateResult = z
  .object({ passed: z.boolean(), transition: z.string(), violations: z.array(violationSchema) })
  .openapi('GateResult');

export const agentJob = z
  .object({
    id: z.string().uuid(),
    feature_slug: z.string(),
    wp_sequence: z.number().int(),
    kind: z.string(),
    owner: z.string().optional().describe('the process running the job, <host>:<pid>:<start>'),
    agent_process: z
      .object({
        pid: z.number().int(),
        host: z.string(),
        boot_id: z.string().optional(),
        start_ticks: z.number().int().optional(),
        pid_ns: z.string().optional(),
      })
      .optional()
      .describe("a process agent's process group (its leader), stopped by the process that recovers the job after a crash"),
    state: z.enum(JOB_STATES),
    review_cycles: z.number().int(),
    max_review_cycles: z.number().int(),
    outcome: z.string().nullable(),
    result: z
      .object({ exit_code: z.number().int(), commits: z.array(z.string()), pr_url: z.string().nullable(), output: z.string() })
      .nullable(),
    error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .openapi('AgentJob');

export const startJobBody = z
  .object({
    feature_slug: slugSchema.clone(),
    wp_sequence: z.number().int().positive(),
    kind: z.string().min(1).optional(),
    review_cycles: z.number().int().min(1).max(20).optional(),
    timeout_ms: z.number().int().min(1000).optional(),
  })
  .strict()
  .openapi('StartJob');

export const webhookResult = z
  .object({
    status: z.enum(['applied', 'transitioned', 'refused', 'duplicate', 'conflict', 'ignored', 'in_sync']),
    delivery_id: z.string(),
    feature_slug: z.string().optional(),
    /** For transitioned and refused: the move the tracker's state change asked for. */
    transition: z.object({ from: z.string(), to: z.string() }).optional(),
    /** For refused: why (also posted on the tracker's issue as a comment). */
    violations: z.array(z.object({ rule_id: z.string(), message: z.string(), remediation: z.string() })).optional(),
  })
  .openapi('WebhookResult');

export const dispatchResult = z
  .object({
    ok: z.boolean(),
    command: z.string(),
    exit_code: z.number().int(),
    duration_ms: z.number().int(),
    result: z.unknown().optional(),
    error: z.object({ code: z.string(), message: z.string(), details: z.record(z.string(), z.unknown()).optional() }).optional(),
    warnings: z
      .array(z.string())
      .optional()
      .describe('deprecation warnings of the call: a legacy:* subcommand, an argument given under its old name'),
    audit: z.record(z.string(), z.unknown()),
  })
  .openapi('DispatchResult');

/**
 * The dispatch envelope, documented as a JSON Schema (not zod) so that the route does not validate it: the dispatch
 * tool does, and answers a bad envelope with a logged result.
 */
export const dispatchEnvelopeJsonSchema = {
  type: 'object' as const,
  required: ['command', 'args'],
  properties: {
    command: { type: 'string' as const, enum: ['dispatch_command'] },
    feature_slug: { type: 'string' as const, description: "fills the subcommand's feature_slug argument" },
    args: {
      type: 'object' as const,
      required: ['command'],
      properties: { command: { type: 'string' as const, description: 'the subcommand, "<category>:<action>"', example: 'audit:verify' } },
      additionalProperties: true,
    },
  },
  additionalProperties: false,
  example: { command: 'dispatch_command', feature_slug: '001-login', args: { command: 'audit:verify' } },
};

export const slugParam = z.object({ slug: slugSchema.clone().openapi({ param: { name: 'slug', in: 'path' }, example: '001-login' }) });

/** Query values arrive as text: booleans accept true/false/1/0. */
export const queryBoolean = z
  .enum(['true', 'false', '1', '0'])
  .transform((v) => v === 'true' || v === '1')
  .optional();

/** A positive integer query value. */
export const queryInt = (max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^\d+$/, 'expected a whole number')
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, `expected 1 to ${max}`)
    .optional();
