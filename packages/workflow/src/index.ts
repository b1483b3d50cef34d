/**
 * @module @switchyard/workflow
 * The feature-workflow domain: features and work packages with their state
 * machines, governance gates, a tamper-evident audit trail per feature
 * (audit-chain), the subcommand registry and its audit log, agent dispatch
 * with a review loop, triage and the backlog, and tracker/code-host sync.
 * Pure classes over store ports; the CLI, HTTP and gRPC surfaces are thin
 * adapters over it.
 *
 * The root holds what an embedder constructs and the types it reads. The
 * rest lives on named subpaths, so the root stays a map of the package:
 * `/domain` (the zod schemas and input parsing the surfaces validate with,
 * wave ordering), `/git` (the repository and artifact store the git
 * subcommands run on), `/lifecycle` (the spec, plan, research, validate,
 * ship and retrospective steps, and the check runner), `/sync` (webhook
 * signing and the GitHub device-token file), `/sqlite`, `/postgres` and
 * `/contract`.
 */

export {
  type AgentAdapter,
  type AgentConfig,
  type AgentRunHooks,
  type AgentTask,
  MockAgentAdapter,
  reportedPrUrl,
} from './agents/agentAdapter.js';
export { AgentDispatcher, type AgentDispatcherOptions } from './agents/agentDispatcher.js';
export { AgentSessionAdapter, type AgentSessionOptions } from './agents/agentSessionAdapter.js';
export { type JobOwner, processJobOwner } from './agents/jobOwner.js';
export { cancelInStore, ENDED_JOB_STATES, type StoredCancel, updateUnlessEnded } from './agents/jobUpdates.js';
export { ProcessAgentAdapter, type ProcessAgentOptions } from './agents/processAgentAdapter.js';
export { isRecordedGroupRunning, type RecordedProcessGroup, stopRecordedProcessGroup } from './agents/processGroup.js';
export {
  type CiStatus,
  type CiStatusSource,
  HeuristicReviewer,
  LlmReviewer,
  type Reviewer,
  type ReviewInput,
  type ReviewVerdict,
} from './agents/reviewers.js';
export type { ReviewLoopDeps } from './agents/reviewLoop.js';
export { type AuditQueryOptions, type AuditQueryRow, type QueryField, runQuery } from './audit/auditQuery.js';
export type { AuditRecord, AuditTrail, TrailVerification } from './audit/auditTrail.js';
export type {
  AddContractInput,
  AttachEvidenceInput,
  CreateFeatureInput,
  CreateWorkPackageInput,
  DefineRuleInput,
  RecordMetricInput,
  TransitionInput,
  UpdateFeatureInput,
  UpdateWorkPackageInput,
} from './domain/inputs.js';
export {
  type AuditAction,
  type AuditTrailEntry,
  type AuditVerification,
  type Contract,
  EVIDENCE_TYPES,
  type Evidence,
  type EvidenceType,
  FEATURE_STATES,
  type Feature,
  type FeatureState,
  type GateResult,
  type GovernanceRule,
  type Metric,
  POLICY_DOMAINS,
  type PolicyDomain,
  type Threshold,
  type WorkPackage,
  type WorkPackageState,
  WP_STATES,
} from './domain/model.js';
export {
  type AgentJob,
  type AgentResult,
  BACKLOG_STATUSES,
  type BacklogItem,
  type BacklogStatus,
  ITEM_TYPES,
  type ItemType,
  JOB_STATES,
  type JobState,
  type SyncLink,
} from './domain/records.js';
export { FEATURE_COMMANDS, type FeatureCommand } from './domain/stateMachine.js';
export {
  GateFailedError,
  InvalidArgumentError,
  NotFoundError,
  type Violation,
  WorkflowError,
  type WorkflowErrorCode,
} from './errors.js';
export { type AgentEvent, WorkflowEventEmitter, type WorkflowEvents } from './events.js';
export type { EnforceAction, GovernanceService } from './governanceService.js';
export { type ChatMessage, GatewayClient, type GatewayClientOptions } from './llm/gatewayClient.js';
export type { FeatureRecords } from './recordsService.js';
export { MemoryWorkflowStore } from './store/memoryWorkflowStore.js';
export type { EvidenceFilter, WorkflowReader, WorkflowStore, WorkflowTx } from './store/workflowStore.js';
export {
  type ArgumentDescription,
  arg,
  argumentsJsonSchema,
  BUILTIN_SUBCOMMANDS,
  DISPATCH_TOOL_NAME,
  type DispatchEnvelope,
  type DispatchResult,
  DispatchTool,
  type DispatchToolOptions,
  defineSubcommand,
  dispatchToolInputSchema,
  EXIT_CODES,
  exitCodeFor,
  type InvokedSubcommand,
  invokeSubcommand,
  runSubcommand,
  SUBCOMMAND_LOG_PATH,
  SubcommandAuditLog,
  type SubcommandAuditLogOptions,
  type SubcommandCategory,
  type SubcommandContext,
  type SubcommandDefinition,
  type SubcommandOutcome,
  type SubcommandRecord,
  SubcommandRegistry,
  toResult,
} from './subcommands/index.js';
export {
  type CodeHostAdapter,
  type IssueContent,
  type RemoteIssue,
  RestTrackerAdapter,
  type RestTrackerOptions,
  type TrackerAdapter,
} from './sync/adapters.js';
export {
  type DeviceFlowOptions,
  type DeviceVerification,
  deviceFlowLogin,
  type GitHubAuth,
} from './sync/github/githubAuth.js';
export { GitHubCodeHostAdapter, type GitHubCodeHostOptions } from './sync/github/githubCodeHost.js';
export type { OAuthClientCredentials } from './sync/http.js';
export type { OutboundPolicy } from './sync/outbound.js';
export { SyncEngine, type SyncEngineOptions, type SyncResult, type WebhookResult } from './sync/syncEngine.js';
export { LinearTrackerAdapter, type LinearTrackerOptions } from './sync/trackers/linearTracker.js';
export { PlaneTrackerAdapter, type PlaneTrackerOptions } from './sync/trackers/planeTracker.js';
export type { TrackerAuth } from './sync/trackers/trackerAuth.js';
export {
  type CustomWebhookOptions,
  customWebhookVerifier,
  linearWebhookVerifier,
  planeWebhookVerifier,
  type VerifiedDelivery,
  type WebhookVerifier,
} from './sync/webhooks.js';
export { type AddBacklogItemInput, BacklogQueue, type TriageResult } from './triage/backlogQueue.js';
export { type Classification, Classifier } from './triage/classifier.js';
export type { Clock } from './util/clock.js';
export { type FeatureTransitionResult, Workflow, type WorkflowOptions, type WorkPackageTransitionResult } from './workflow.js';
