/**
 * @module @switchyard/workflow/lifecycle
 * The feature lifecycle steps `yard` runs around the state machine: write
 * the spec, plan work packages (from a checklist or a model), gather
 * research, validate with the configured checks, ship (merge the work
 * package branches), and write the retrospective. Each step is a function
 * over a `Workflow` and the repository.
 *
 * @example
 * ```ts
 * import { featureSpec } from '@switchyard/workflow/lifecycle';
 * const spec = await featureSpec(workflow, 'my-feature');
 * ```
 */

export {
  CHECK_EVIDENCE_TYPE,
  type CheckCommand,
  type CheckHooks,
  type CheckKind,
  type CheckRun,
  CheckRunner,
  type CheckRunnerOptions,
} from './ci/checkRunner.js';
export { localCiStatus, type RecordedCheckRun } from './ci/localCi.js';
export { addPlannedPackages, checklistPlan, modelPlan, type PlannedPackage } from './lifecycle/plan.js';
export { type CodeHit, gatherResearch, type ResearchMaterial, type ResearchOptions, researchFeature } from './lifecycle/research.js';
export { type RetrospectiveFacts, retrospectiveFacts, retrospectiveFeature, retrospectiveMarkdown } from './lifecycle/retrospective.js';
export { type ShipOptions, type ShipReport, shipFeature } from './lifecycle/ship.js';
export { featureSpec } from './lifecycle/spec.js';
export { type ValidateOptions, type ValidationReport, validateFeature } from './lifecycle/validate.js';
