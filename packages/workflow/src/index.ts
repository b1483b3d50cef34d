/**
 * @module @switchyard/workflow
 * The feature-workflow domain: features and work packages with their state
 * machines, governance gates, a tamper-evident audit trail per feature
 * (audit-chain), the subcommand registry and its audit log, git and
 * artifacts, triage and the backlog, agent dispatch with a review loop, and
 * tracker/code-host sync. Pure classes over store ports; the CLI, HTTP and
 * gRPC surfaces are thin adapters over it.
 */

export {
  type AgentAdapter,
  type AgentConfig,
  type AgentRunHooks,
  type AgentTask,
  MockAgentAdapter,
  reportedPrUrl,
} from './agents/agentAdapter.js';
export { AgentDispatcher, type AgentDispatcherOptions, agentConfigInput } from './agents/agentDispatcher.js';
export { AgentSessionAdapter, type AgentSessionOptions } from './agents/agentSessionAdapter.js';
export { type JobOwner, processJobOwner } from './agents/jobOwner.js';
export { ENDED_JOB_STATES, updateUnlessEnded } from './agents/jobUpdates.js';
export { ProcessAgentAdapter, type ProcessAgentOptions } from './agents/processAgentAdapter.js';
export {
  type CiStatus,
  type CiStatusSource,
  HeuristicReviewer,
  LlmReviewer,
  type Reviewer,
  type ReviewInput,
  type ReviewVerdict,
} from './agents/reviewers.js';
export { type JobOutcome, type LoopReport, ReviewLoop, type ReviewLoopDeps } from './agents/reviewLoop.js';
export {
  type AuditQueryOptions,
  type AuditQueryRow,
  parseGroupBy,
  parseOrderBy,
  parseWhere,
  QUERY_FIELDS,
  type QueryField,
  runQuery,
} from './audit/auditQuery.js';
export { type AuditRecord, AuditTrail, auditOrigin, GOVERNANCE_CHAIN, type TrailVerification } from './audit/auditTrail.js';
export { defaultRules, evaluateGates, type GateEvaluation, type GateSubject } from './domain/governance.js';
export * from './domain/inputs.js';
export * from './domain/model.js';
export * from './domain/records.js';
export {
  assertWorkPackageMove,
  FEATURE_COMMANDS,
  type FeatureCommand,
  type FeatureMovePlan,
  featureCommandTarget,
  parseTransition,
  planFeatureMove,
  toFeatureState,
  toWorkPackageState,
  transitionString,
  WP_TRANSITIONS,
} from './domain/stateMachine.js';
export { computeWaves, effectiveDependencies, type Orderable, scopesOverlap } from './domain/waves.js';
export {
  asWorkflowError,
  GateFailedError,
  InvalidArgumentError,
  NotFoundError,
  type Violation,
  WorkflowError,
  type WorkflowErrorCode,
} from './errors.js';
export { type AgentEvent, WorkflowEventEmitter, type WorkflowEvents } from './events.js';
export { type Artifact, ArtifactStore, artifactHash, DEFAULT_ARTIFACT_ROOT } from './git/artifactStore.js';
export { type ConfinedFileOptions, openConfinedFile, readConfinedFile, removeConfinedFile, writeConfinedFile } from './git/confinedFile.js';
export {
  type BranchInfo,
  type CommitInfo,
  type DiffStat,
  GIT_DEFAULTS,
  GitRepository,
  type StashEntry,
  type Worktree,
  workPackageBranch,
} from './git/gitRepository.js';
export { assertBranchName, assertRevision, assertSafeArgument, confinedPath } from './git/safety.js';
export { type EnforceAction, GovernanceService } from './governanceService.js';
export { type ChatMessage, GatewayClient, type GatewayClientOptions } from './llm/gatewayClient.js';
export { FeatureRecords } from './recordsService.js';
export { MemoryWorkflowStore } from './store/memoryWorkflowStore.js';
export type { EvidenceFilter, WorkflowReader, WorkflowStore, WorkflowTx } from './store/workflowStore.js';
export * from './subcommands/index.js';
export {
  type CodeHostAdapter,
  DEFAULT_STATE_MAPPING,
  type IssueContent,
  type RemoteIssue,
  RestTrackerAdapter,
  type RestTrackerOptions,
  type TrackerAdapter,
} from './sync/adapters.js';
export { type CheckRunLike, type CommitStatusLike, combineCi } from './sync/github/ciStatus.js';
export {
  type DeviceFlowOptions,
  type DeviceVerification,
  deviceFlowLogin,
  type GitHubAuth,
  readDeviceToken,
  type StoredDeviceToken,
} from './sync/github/githubAuth.js';
export { GitHubCodeHostAdapter, type GitHubCodeHostOptions } from './sync/github/githubCodeHost.js';
export { type OAuthClientCredentials, OAuthTokenSource } from './sync/http.js';
export { checkedBaseUrl, guardedDispatcher, type OutboundPolicy } from './sync/outbound.js';
export { contentHash, refusalComment, SyncEngine, type SyncEngineOptions, type SyncResult, type WebhookResult } from './sync/syncEngine.js';
export { LinearTrackerAdapter, type LinearTrackerOptions } from './sync/trackers/linearTracker.js';
export { PlaneTrackerAdapter, type PlaneTrackerOptions } from './sync/trackers/planeTracker.js';
export { type TrackerAuth, trackerTokenSource } from './sync/trackers/trackerAuth.js';
export {
  type CustomWebhookOptions,
  customWebhookVerifier,
  LINEAR_TOLERANCE_MS,
  linearWebhookVerifier,
  planeWebhookVerifier,
  type RawDelivery,
  type SignedDelivery,
  signDelivery,
  signLinearDelivery,
  signPlaneDelivery,
  type VerifiedDelivery,
  verifySignature,
  WEBHOOK_TOLERANCE_MS,
  type WebhookVerifier,
} from './sync/webhooks.js';
export { type AddBacklogItemInput, addBacklogItemInput, BacklogQueue, queueOrder, type TriageResult } from './triage/backlogQueue.js';
export { CLASSIFIER_WEIGHTS, type Classification, Classifier, classifyHeuristic } from './triage/classifier.js';
export { type Clock, systemClock } from './util/clock.js';
export { type FeatureTransitionResult, Workflow, type WorkflowOptions, type WorkPackageTransitionResult } from './workflow.js';
