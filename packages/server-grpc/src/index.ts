/**
 * @module @switchyard/server-grpc
 * The feature workflow over gRPC: `CoreService` (features, work packages,
 * governance gates, the audit trail, the dispatch tool, agent events) and
 * `AgentService` (remote agents), from the checked-in
 * `proto/switchyard/workflow/v1/workflow.proto`, with health checking and
 * reflection on.
 */
export { AgentHub, type AgentHubOptions, type HubPrompt } from './agentHub.js';
export { agentServiceHandlers } from './agentService.js';
export { type Authorize, auditEntryMessage, type CoreServiceOptions, coreServiceHandlers, workPackageMessage } from './coreService.js';
export type { ProtoGrpcType } from './generated/workflow.js';
export { decodeStatusDetails, GrpcServerError, type StatusDetails, toServiceError, WORKFLOW_GRPC_STATUS } from './grpcErrors.js';
export { apiKeyAuthorizer, type GrpcServer, type GrpcServerOptions, startGrpcServer } from './grpcServer.js';
export { AGENT_SERVICE, CORE_SERVICE, loadWorkflowProto, PROTO_LOADER_OPTIONS, WORKFLOW_PROTO_PATH } from './proto.js';
export { fromStruct, fromValue, toStruct, toValue } from './struct.js';
