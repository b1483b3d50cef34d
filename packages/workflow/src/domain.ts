/**
 * @module @switchyard/workflow/domain
 * The domain's zod schemas and input parsing, for surfaces that validate
 * requests before they reach the `Workflow` (the HTTP and gRPC servers),
 * and the work-package wave ordering they report. The types these schemas
 * describe (`Feature`, `CreateFeatureInput`, …) are on the package root.
 *
 * @example
 * ```ts
 * import { createFeatureInput, parseInput } from '@switchyard/workflow/domain';
 * const input = parseInput(createFeatureInput, body, 'body');
 * ```
 */

export {
  addContractInput,
  attachEvidenceInput,
  createFeatureInput,
  createWorkPackageInput,
  defineRuleInput,
  parseInput,
  recordMetricInput,
  relativePathSchema,
  transitionInput,
  updateFeatureInput,
  updateWorkPackageInput,
} from './domain/inputs.js';
export {
  actorSchema,
  contractSchema,
  evidenceSchema,
  featureSchema,
  governanceRuleSchema,
  metricSchema,
  slugSchema,
  thresholdSchema,
  transitionStringSchema,
  workPackageSchema,
} from './domain/model.js';
export { backlogItemSchema } from './domain/records.js';
export { computeWaves, effectiveDependencies, type Orderable } from './domain/waves.js';
export { addBacklogItemInput } from './triage/backlogQueue.js';
