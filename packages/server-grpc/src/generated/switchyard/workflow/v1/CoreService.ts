// Original file: proto/switchyard/workflow/v1/workflow.proto

import type * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type {
  AgentEvent as _switchyard_workflow_v1_AgentEvent,
  AgentEvent__Output as _switchyard_workflow_v1_AgentEvent__Output,
} from './AgentEvent.js';
import type {
  AuditEntry as _switchyard_workflow_v1_AuditEntry,
  AuditEntry__Output as _switchyard_workflow_v1_AuditEntry__Output,
} from './AuditEntry.js';
import type {
  AuditVerification as _switchyard_workflow_v1_AuditVerification,
  AuditVerification__Output as _switchyard_workflow_v1_AuditVerification__Output,
} from './AuditVerification.js';
import type {
  CheckGovernanceGateRequest as _switchyard_workflow_v1_CheckGovernanceGateRequest,
  CheckGovernanceGateRequest__Output as _switchyard_workflow_v1_CheckGovernanceGateRequest__Output,
} from './CheckGovernanceGateRequest.js';
import type {
  DispatchCommandRequest as _switchyard_workflow_v1_DispatchCommandRequest,
  DispatchCommandRequest__Output as _switchyard_workflow_v1_DispatchCommandRequest__Output,
} from './DispatchCommandRequest.js';
import type {
  DispatchCommandResponse as _switchyard_workflow_v1_DispatchCommandResponse,
  DispatchCommandResponse__Output as _switchyard_workflow_v1_DispatchCommandResponse__Output,
} from './DispatchCommandResponse.js';
import type { Feature as _switchyard_workflow_v1_Feature, Feature__Output as _switchyard_workflow_v1_Feature__Output } from './Feature.js';
import type {
  FeatureStateResponse as _switchyard_workflow_v1_FeatureStateResponse,
  FeatureStateResponse__Output as _switchyard_workflow_v1_FeatureStateResponse__Output,
} from './FeatureStateResponse.js';
import type {
  GateResult as _switchyard_workflow_v1_GateResult,
  GateResult__Output as _switchyard_workflow_v1_GateResult__Output,
} from './GateResult.js';
import type {
  GetAuditTrailRequest as _switchyard_workflow_v1_GetAuditTrailRequest,
  GetAuditTrailRequest__Output as _switchyard_workflow_v1_GetAuditTrailRequest__Output,
} from './GetAuditTrailRequest.js';
import type {
  GetFeatureRequest as _switchyard_workflow_v1_GetFeatureRequest,
  GetFeatureRequest__Output as _switchyard_workflow_v1_GetFeatureRequest__Output,
} from './GetFeatureRequest.js';
import type {
  GetWorkPackageStatusRequest as _switchyard_workflow_v1_GetWorkPackageStatusRequest,
  GetWorkPackageStatusRequest__Output as _switchyard_workflow_v1_GetWorkPackageStatusRequest__Output,
} from './GetWorkPackageStatusRequest.js';
import type {
  ListFeaturesRequest as _switchyard_workflow_v1_ListFeaturesRequest,
  ListFeaturesRequest__Output as _switchyard_workflow_v1_ListFeaturesRequest__Output,
} from './ListFeaturesRequest.js';
import type {
  ListFeaturesResponse as _switchyard_workflow_v1_ListFeaturesResponse,
  ListFeaturesResponse__Output as _switchyard_workflow_v1_ListFeaturesResponse__Output,
} from './ListFeaturesResponse.js';
import type {
  ListWorkPackagesRequest as _switchyard_workflow_v1_ListWorkPackagesRequest,
  ListWorkPackagesRequest__Output as _switchyard_workflow_v1_ListWorkPackagesRequest__Output,
} from './ListWorkPackagesRequest.js';
import type {
  ListWorkPackagesResponse as _switchyard_workflow_v1_ListWorkPackagesResponse,
  ListWorkPackagesResponse__Output as _switchyard_workflow_v1_ListWorkPackagesResponse__Output,
} from './ListWorkPackagesResponse.js';
import type {
  StreamAgentEventsRequest as _switchyard_workflow_v1_StreamAgentEventsRequest,
  StreamAgentEventsRequest__Output as _switchyard_workflow_v1_StreamAgentEventsRequest__Output,
} from './StreamAgentEventsRequest.js';
import type {
  VerifyAuditChainRequest as _switchyard_workflow_v1_VerifyAuditChainRequest,
  VerifyAuditChainRequest__Output as _switchyard_workflow_v1_VerifyAuditChainRequest__Output,
} from './VerifyAuditChainRequest.js';
import type {
  WorkPackageStatus as _switchyard_workflow_v1_WorkPackageStatus,
  WorkPackageStatus__Output as _switchyard_workflow_v1_WorkPackageStatus__Output,
} from './WorkPackageStatus.js';

export interface CoreServiceClient extends grpc.Client {
  CheckGovernanceGate(
    argument: _switchyard_workflow_v1_CheckGovernanceGateRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_GateResult__Output>,
  ): grpc.ClientUnaryCall;
  CheckGovernanceGate(
    argument: _switchyard_workflow_v1_CheckGovernanceGateRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_GateResult__Output>,
  ): grpc.ClientUnaryCall;
  CheckGovernanceGate(
    argument: _switchyard_workflow_v1_CheckGovernanceGateRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_GateResult__Output>,
  ): grpc.ClientUnaryCall;
  CheckGovernanceGate(
    argument: _switchyard_workflow_v1_CheckGovernanceGateRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_GateResult__Output>,
  ): grpc.ClientUnaryCall;
  checkGovernanceGate(
    argument: _switchyard_workflow_v1_CheckGovernanceGateRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_GateResult__Output>,
  ): grpc.ClientUnaryCall;
  checkGovernanceGate(
    argument: _switchyard_workflow_v1_CheckGovernanceGateRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_GateResult__Output>,
  ): grpc.ClientUnaryCall;
  checkGovernanceGate(
    argument: _switchyard_workflow_v1_CheckGovernanceGateRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_GateResult__Output>,
  ): grpc.ClientUnaryCall;
  checkGovernanceGate(
    argument: _switchyard_workflow_v1_CheckGovernanceGateRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_GateResult__Output>,
  ): grpc.ClientUnaryCall;

  DispatchCommand(
    argument: _switchyard_workflow_v1_DispatchCommandRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_DispatchCommandResponse__Output>,
  ): grpc.ClientUnaryCall;
  DispatchCommand(
    argument: _switchyard_workflow_v1_DispatchCommandRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_DispatchCommandResponse__Output>,
  ): grpc.ClientUnaryCall;
  DispatchCommand(
    argument: _switchyard_workflow_v1_DispatchCommandRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_DispatchCommandResponse__Output>,
  ): grpc.ClientUnaryCall;
  DispatchCommand(
    argument: _switchyard_workflow_v1_DispatchCommandRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_DispatchCommandResponse__Output>,
  ): grpc.ClientUnaryCall;
  dispatchCommand(
    argument: _switchyard_workflow_v1_DispatchCommandRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_DispatchCommandResponse__Output>,
  ): grpc.ClientUnaryCall;
  dispatchCommand(
    argument: _switchyard_workflow_v1_DispatchCommandRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_DispatchCommandResponse__Output>,
  ): grpc.ClientUnaryCall;
  dispatchCommand(
    argument: _switchyard_workflow_v1_DispatchCommandRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_DispatchCommandResponse__Output>,
  ): grpc.ClientUnaryCall;
  dispatchCommand(
    argument: _switchyard_workflow_v1_DispatchCommandRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_DispatchCommandResponse__Output>,
  ): grpc.ClientUnaryCall;

  GetAuditTrail(
    argument: _switchyard_workflow_v1_GetAuditTrailRequest,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_switchyard_workflow_v1_AuditEntry__Output>;
  GetAuditTrail(
    argument: _switchyard_workflow_v1_GetAuditTrailRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_switchyard_workflow_v1_AuditEntry__Output>;
  getAuditTrail(
    argument: _switchyard_workflow_v1_GetAuditTrailRequest,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_switchyard_workflow_v1_AuditEntry__Output>;
  getAuditTrail(
    argument: _switchyard_workflow_v1_GetAuditTrailRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_switchyard_workflow_v1_AuditEntry__Output>;

  GetFeature(
    argument: _switchyard_workflow_v1_GetFeatureRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Feature__Output>,
  ): grpc.ClientUnaryCall;
  GetFeature(
    argument: _switchyard_workflow_v1_GetFeatureRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Feature__Output>,
  ): grpc.ClientUnaryCall;
  GetFeature(
    argument: _switchyard_workflow_v1_GetFeatureRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Feature__Output>,
  ): grpc.ClientUnaryCall;
  GetFeature(
    argument: _switchyard_workflow_v1_GetFeatureRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Feature__Output>,
  ): grpc.ClientUnaryCall;
  getFeature(
    argument: _switchyard_workflow_v1_GetFeatureRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Feature__Output>,
  ): grpc.ClientUnaryCall;
  getFeature(
    argument: _switchyard_workflow_v1_GetFeatureRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Feature__Output>,
  ): grpc.ClientUnaryCall;
  getFeature(
    argument: _switchyard_workflow_v1_GetFeatureRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Feature__Output>,
  ): grpc.ClientUnaryCall;
  getFeature(
    argument: _switchyard_workflow_v1_GetFeatureRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Feature__Output>,
  ): grpc.ClientUnaryCall;

  GetFeatureState(
    argument: _switchyard_workflow_v1_GetFeatureRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_FeatureStateResponse__Output>,
  ): grpc.ClientUnaryCall;
  GetFeatureState(
    argument: _switchyard_workflow_v1_GetFeatureRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_FeatureStateResponse__Output>,
  ): grpc.ClientUnaryCall;
  GetFeatureState(
    argument: _switchyard_workflow_v1_GetFeatureRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_FeatureStateResponse__Output>,
  ): grpc.ClientUnaryCall;
  GetFeatureState(
    argument: _switchyard_workflow_v1_GetFeatureRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_FeatureStateResponse__Output>,
  ): grpc.ClientUnaryCall;
  getFeatureState(
    argument: _switchyard_workflow_v1_GetFeatureRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_FeatureStateResponse__Output>,
  ): grpc.ClientUnaryCall;
  getFeatureState(
    argument: _switchyard_workflow_v1_GetFeatureRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_FeatureStateResponse__Output>,
  ): grpc.ClientUnaryCall;
  getFeatureState(
    argument: _switchyard_workflow_v1_GetFeatureRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_FeatureStateResponse__Output>,
  ): grpc.ClientUnaryCall;
  getFeatureState(
    argument: _switchyard_workflow_v1_GetFeatureRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_FeatureStateResponse__Output>,
  ): grpc.ClientUnaryCall;

  GetWorkPackageStatus(
    argument: _switchyard_workflow_v1_GetWorkPackageStatusRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_WorkPackageStatus__Output>,
  ): grpc.ClientUnaryCall;
  GetWorkPackageStatus(
    argument: _switchyard_workflow_v1_GetWorkPackageStatusRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_WorkPackageStatus__Output>,
  ): grpc.ClientUnaryCall;
  GetWorkPackageStatus(
    argument: _switchyard_workflow_v1_GetWorkPackageStatusRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_WorkPackageStatus__Output>,
  ): grpc.ClientUnaryCall;
  GetWorkPackageStatus(
    argument: _switchyard_workflow_v1_GetWorkPackageStatusRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_WorkPackageStatus__Output>,
  ): grpc.ClientUnaryCall;
  getWorkPackageStatus(
    argument: _switchyard_workflow_v1_GetWorkPackageStatusRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_WorkPackageStatus__Output>,
  ): grpc.ClientUnaryCall;
  getWorkPackageStatus(
    argument: _switchyard_workflow_v1_GetWorkPackageStatusRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_WorkPackageStatus__Output>,
  ): grpc.ClientUnaryCall;
  getWorkPackageStatus(
    argument: _switchyard_workflow_v1_GetWorkPackageStatusRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_WorkPackageStatus__Output>,
  ): grpc.ClientUnaryCall;
  getWorkPackageStatus(
    argument: _switchyard_workflow_v1_GetWorkPackageStatusRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_WorkPackageStatus__Output>,
  ): grpc.ClientUnaryCall;

  ListFeatures(
    argument: _switchyard_workflow_v1_ListFeaturesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_ListFeaturesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListFeatures(
    argument: _switchyard_workflow_v1_ListFeaturesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_ListFeaturesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListFeatures(
    argument: _switchyard_workflow_v1_ListFeaturesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_ListFeaturesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListFeatures(
    argument: _switchyard_workflow_v1_ListFeaturesRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_ListFeaturesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listFeatures(
    argument: _switchyard_workflow_v1_ListFeaturesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_ListFeaturesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listFeatures(
    argument: _switchyard_workflow_v1_ListFeaturesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_ListFeaturesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listFeatures(
    argument: _switchyard_workflow_v1_ListFeaturesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_ListFeaturesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listFeatures(
    argument: _switchyard_workflow_v1_ListFeaturesRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_ListFeaturesResponse__Output>,
  ): grpc.ClientUnaryCall;

  ListWorkPackages(
    argument: _switchyard_workflow_v1_ListWorkPackagesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_ListWorkPackagesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListWorkPackages(
    argument: _switchyard_workflow_v1_ListWorkPackagesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_ListWorkPackagesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListWorkPackages(
    argument: _switchyard_workflow_v1_ListWorkPackagesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_ListWorkPackagesResponse__Output>,
  ): grpc.ClientUnaryCall;
  ListWorkPackages(
    argument: _switchyard_workflow_v1_ListWorkPackagesRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_ListWorkPackagesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listWorkPackages(
    argument: _switchyard_workflow_v1_ListWorkPackagesRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_ListWorkPackagesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listWorkPackages(
    argument: _switchyard_workflow_v1_ListWorkPackagesRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_ListWorkPackagesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listWorkPackages(
    argument: _switchyard_workflow_v1_ListWorkPackagesRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_ListWorkPackagesResponse__Output>,
  ): grpc.ClientUnaryCall;
  listWorkPackages(
    argument: _switchyard_workflow_v1_ListWorkPackagesRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_ListWorkPackagesResponse__Output>,
  ): grpc.ClientUnaryCall;

  StreamAgentEvents(
    argument: _switchyard_workflow_v1_StreamAgentEventsRequest,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_switchyard_workflow_v1_AgentEvent__Output>;
  StreamAgentEvents(
    argument: _switchyard_workflow_v1_StreamAgentEventsRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_switchyard_workflow_v1_AgentEvent__Output>;
  streamAgentEvents(
    argument: _switchyard_workflow_v1_StreamAgentEventsRequest,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_switchyard_workflow_v1_AgentEvent__Output>;
  streamAgentEvents(
    argument: _switchyard_workflow_v1_StreamAgentEventsRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_switchyard_workflow_v1_AgentEvent__Output>;

  VerifyAuditChain(
    argument: _switchyard_workflow_v1_VerifyAuditChainRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_AuditVerification__Output>,
  ): grpc.ClientUnaryCall;
  VerifyAuditChain(
    argument: _switchyard_workflow_v1_VerifyAuditChainRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_AuditVerification__Output>,
  ): grpc.ClientUnaryCall;
  VerifyAuditChain(
    argument: _switchyard_workflow_v1_VerifyAuditChainRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_AuditVerification__Output>,
  ): grpc.ClientUnaryCall;
  VerifyAuditChain(
    argument: _switchyard_workflow_v1_VerifyAuditChainRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_AuditVerification__Output>,
  ): grpc.ClientUnaryCall;
  verifyAuditChain(
    argument: _switchyard_workflow_v1_VerifyAuditChainRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_AuditVerification__Output>,
  ): grpc.ClientUnaryCall;
  verifyAuditChain(
    argument: _switchyard_workflow_v1_VerifyAuditChainRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_AuditVerification__Output>,
  ): grpc.ClientUnaryCall;
  verifyAuditChain(
    argument: _switchyard_workflow_v1_VerifyAuditChainRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_AuditVerification__Output>,
  ): grpc.ClientUnaryCall;
  verifyAuditChain(
    argument: _switchyard_workflow_v1_VerifyAuditChainRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_AuditVerification__Output>,
  ): grpc.ClientUnaryCall;
}

export interface CoreServiceHandlers extends grpc.UntypedServiceImplementation {
  CheckGovernanceGate: grpc.handleUnaryCall<_switchyard_workflow_v1_CheckGovernanceGateRequest__Output, _switchyard_workflow_v1_GateResult>;

  DispatchCommand: grpc.handleUnaryCall<
    _switchyard_workflow_v1_DispatchCommandRequest__Output,
    _switchyard_workflow_v1_DispatchCommandResponse
  >;

  GetAuditTrail: grpc.handleServerStreamingCall<_switchyard_workflow_v1_GetAuditTrailRequest__Output, _switchyard_workflow_v1_AuditEntry>;

  GetFeature: grpc.handleUnaryCall<_switchyard_workflow_v1_GetFeatureRequest__Output, _switchyard_workflow_v1_Feature>;

  GetFeatureState: grpc.handleUnaryCall<_switchyard_workflow_v1_GetFeatureRequest__Output, _switchyard_workflow_v1_FeatureStateResponse>;

  GetWorkPackageStatus: grpc.handleUnaryCall<
    _switchyard_workflow_v1_GetWorkPackageStatusRequest__Output,
    _switchyard_workflow_v1_WorkPackageStatus
  >;

  ListFeatures: grpc.handleUnaryCall<_switchyard_workflow_v1_ListFeaturesRequest__Output, _switchyard_workflow_v1_ListFeaturesResponse>;

  ListWorkPackages: grpc.handleUnaryCall<
    _switchyard_workflow_v1_ListWorkPackagesRequest__Output,
    _switchyard_workflow_v1_ListWorkPackagesResponse
  >;

  StreamAgentEvents: grpc.handleServerStreamingCall<
    _switchyard_workflow_v1_StreamAgentEventsRequest__Output,
    _switchyard_workflow_v1_AgentEvent
  >;

  VerifyAuditChain: grpc.handleUnaryCall<
    _switchyard_workflow_v1_VerifyAuditChainRequest__Output,
    _switchyard_workflow_v1_AuditVerification
  >;
}

export interface CoreServiceDefinition extends grpc.ServiceDefinition {
  CheckGovernanceGate: MethodDefinition<
    _switchyard_workflow_v1_CheckGovernanceGateRequest,
    _switchyard_workflow_v1_GateResult,
    _switchyard_workflow_v1_CheckGovernanceGateRequest__Output,
    _switchyard_workflow_v1_GateResult__Output
  >;
  DispatchCommand: MethodDefinition<
    _switchyard_workflow_v1_DispatchCommandRequest,
    _switchyard_workflow_v1_DispatchCommandResponse,
    _switchyard_workflow_v1_DispatchCommandRequest__Output,
    _switchyard_workflow_v1_DispatchCommandResponse__Output
  >;
  GetAuditTrail: MethodDefinition<
    _switchyard_workflow_v1_GetAuditTrailRequest,
    _switchyard_workflow_v1_AuditEntry,
    _switchyard_workflow_v1_GetAuditTrailRequest__Output,
    _switchyard_workflow_v1_AuditEntry__Output
  >;
  GetFeature: MethodDefinition<
    _switchyard_workflow_v1_GetFeatureRequest,
    _switchyard_workflow_v1_Feature,
    _switchyard_workflow_v1_GetFeatureRequest__Output,
    _switchyard_workflow_v1_Feature__Output
  >;
  GetFeatureState: MethodDefinition<
    _switchyard_workflow_v1_GetFeatureRequest,
    _switchyard_workflow_v1_FeatureStateResponse,
    _switchyard_workflow_v1_GetFeatureRequest__Output,
    _switchyard_workflow_v1_FeatureStateResponse__Output
  >;
  GetWorkPackageStatus: MethodDefinition<
    _switchyard_workflow_v1_GetWorkPackageStatusRequest,
    _switchyard_workflow_v1_WorkPackageStatus,
    _switchyard_workflow_v1_GetWorkPackageStatusRequest__Output,
    _switchyard_workflow_v1_WorkPackageStatus__Output
  >;
  ListFeatures: MethodDefinition<
    _switchyard_workflow_v1_ListFeaturesRequest,
    _switchyard_workflow_v1_ListFeaturesResponse,
    _switchyard_workflow_v1_ListFeaturesRequest__Output,
    _switchyard_workflow_v1_ListFeaturesResponse__Output
  >;
  ListWorkPackages: MethodDefinition<
    _switchyard_workflow_v1_ListWorkPackagesRequest,
    _switchyard_workflow_v1_ListWorkPackagesResponse,
    _switchyard_workflow_v1_ListWorkPackagesRequest__Output,
    _switchyard_workflow_v1_ListWorkPackagesResponse__Output
  >;
  StreamAgentEvents: MethodDefinition<
    _switchyard_workflow_v1_StreamAgentEventsRequest,
    _switchyard_workflow_v1_AgentEvent,
    _switchyard_workflow_v1_StreamAgentEventsRequest__Output,
    _switchyard_workflow_v1_AgentEvent__Output
  >;
  VerifyAuditChain: MethodDefinition<
    _switchyard_workflow_v1_VerifyAuditChainRequest,
    _switchyard_workflow_v1_AuditVerification,
    _switchyard_workflow_v1_VerifyAuditChainRequest__Output,
    _switchyard_workflow_v1_AuditVerification__Output
  >;
}
