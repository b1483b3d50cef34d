import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type {
  ListValue as _google_protobuf_ListValue,
  ListValue__Output as _google_protobuf_ListValue__Output,
} from './google/protobuf/ListValue.js';
import type { Struct as _google_protobuf_Struct, Struct__Output as _google_protobuf_Struct__Output } from './google/protobuf/Struct.js';
import type { Value as _google_protobuf_Value, Value__Output as _google_protobuf_Value__Output } from './google/protobuf/Value.js';
import type {
  Ack as _switchyard_workflow_v1_Ack,
  Ack__Output as _switchyard_workflow_v1_Ack__Output,
} from './switchyard/workflow/v1/Ack.js';
import type {
  AgentEvent as _switchyard_workflow_v1_AgentEvent,
  AgentEvent__Output as _switchyard_workflow_v1_AgentEvent__Output,
} from './switchyard/workflow/v1/AgentEvent.js';
import type {
  AgentServiceClient as _switchyard_workflow_v1_AgentServiceClient,
  AgentServiceDefinition as _switchyard_workflow_v1_AgentServiceDefinition,
} from './switchyard/workflow/v1/AgentService.js';
import type {
  AuditEntry as _switchyard_workflow_v1_AuditEntry,
  AuditEntry__Output as _switchyard_workflow_v1_AuditEntry__Output,
} from './switchyard/workflow/v1/AuditEntry.js';
import type {
  AuditVerification as _switchyard_workflow_v1_AuditVerification,
  AuditVerification__Output as _switchyard_workflow_v1_AuditVerification__Output,
} from './switchyard/workflow/v1/AuditVerification.js';
import type {
  CheckGovernanceGateRequest as _switchyard_workflow_v1_CheckGovernanceGateRequest,
  CheckGovernanceGateRequest__Output as _switchyard_workflow_v1_CheckGovernanceGateRequest__Output,
} from './switchyard/workflow/v1/CheckGovernanceGateRequest.js';
import type {
  CompleteTaskRequest as _switchyard_workflow_v1_CompleteTaskRequest,
  CompleteTaskRequest__Output as _switchyard_workflow_v1_CompleteTaskRequest__Output,
} from './switchyard/workflow/v1/CompleteTaskRequest.js';
import type {
  CoreServiceClient as _switchyard_workflow_v1_CoreServiceClient,
  CoreServiceDefinition as _switchyard_workflow_v1_CoreServiceDefinition,
} from './switchyard/workflow/v1/CoreService.js';
import type {
  DispatchCommandRequest as _switchyard_workflow_v1_DispatchCommandRequest,
  DispatchCommandRequest__Output as _switchyard_workflow_v1_DispatchCommandRequest__Output,
} from './switchyard/workflow/v1/DispatchCommandRequest.js';
import type {
  DispatchCommandResponse as _switchyard_workflow_v1_DispatchCommandResponse,
  DispatchCommandResponse__Output as _switchyard_workflow_v1_DispatchCommandResponse__Output,
} from './switchyard/workflow/v1/DispatchCommandResponse.js';
import type {
  DispatchError as _switchyard_workflow_v1_DispatchError,
  DispatchError__Output as _switchyard_workflow_v1_DispatchError__Output,
} from './switchyard/workflow/v1/DispatchError.js';
import type {
  EndSessionRequest as _switchyard_workflow_v1_EndSessionRequest,
  EndSessionRequest__Output as _switchyard_workflow_v1_EndSessionRequest__Output,
} from './switchyard/workflow/v1/EndSessionRequest.js';
import type {
  Feature as _switchyard_workflow_v1_Feature,
  Feature__Output as _switchyard_workflow_v1_Feature__Output,
} from './switchyard/workflow/v1/Feature.js';
import type {
  FeatureStateResponse as _switchyard_workflow_v1_FeatureStateResponse,
  FeatureStateResponse__Output as _switchyard_workflow_v1_FeatureStateResponse__Output,
} from './switchyard/workflow/v1/FeatureStateResponse.js';
import type {
  GateResult as _switchyard_workflow_v1_GateResult,
  GateResult__Output as _switchyard_workflow_v1_GateResult__Output,
} from './switchyard/workflow/v1/GateResult.js';
import type {
  GetAuditTrailRequest as _switchyard_workflow_v1_GetAuditTrailRequest,
  GetAuditTrailRequest__Output as _switchyard_workflow_v1_GetAuditTrailRequest__Output,
} from './switchyard/workflow/v1/GetAuditTrailRequest.js';
import type {
  GetFeatureRequest as _switchyard_workflow_v1_GetFeatureRequest,
  GetFeatureRequest__Output as _switchyard_workflow_v1_GetFeatureRequest__Output,
} from './switchyard/workflow/v1/GetFeatureRequest.js';
import type {
  GetWorkPackageStatusRequest as _switchyard_workflow_v1_GetWorkPackageStatusRequest,
  GetWorkPackageStatusRequest__Output as _switchyard_workflow_v1_GetWorkPackageStatusRequest__Output,
} from './switchyard/workflow/v1/GetWorkPackageStatusRequest.js';
import type {
  HeartbeatRequest as _switchyard_workflow_v1_HeartbeatRequest,
  HeartbeatRequest__Output as _switchyard_workflow_v1_HeartbeatRequest__Output,
} from './switchyard/workflow/v1/HeartbeatRequest.js';
import type {
  HeartbeatResponse as _switchyard_workflow_v1_HeartbeatResponse,
  HeartbeatResponse__Output as _switchyard_workflow_v1_HeartbeatResponse__Output,
} from './switchyard/workflow/v1/HeartbeatResponse.js';
import type {
  ListFeaturesRequest as _switchyard_workflow_v1_ListFeaturesRequest,
  ListFeaturesRequest__Output as _switchyard_workflow_v1_ListFeaturesRequest__Output,
} from './switchyard/workflow/v1/ListFeaturesRequest.js';
import type {
  ListFeaturesResponse as _switchyard_workflow_v1_ListFeaturesResponse,
  ListFeaturesResponse__Output as _switchyard_workflow_v1_ListFeaturesResponse__Output,
} from './switchyard/workflow/v1/ListFeaturesResponse.js';
import type {
  ListWorkPackagesRequest as _switchyard_workflow_v1_ListWorkPackagesRequest,
  ListWorkPackagesRequest__Output as _switchyard_workflow_v1_ListWorkPackagesRequest__Output,
} from './switchyard/workflow/v1/ListWorkPackagesRequest.js';
import type {
  ListWorkPackagesResponse as _switchyard_workflow_v1_ListWorkPackagesResponse,
  ListWorkPackagesResponse__Output as _switchyard_workflow_v1_ListWorkPackagesResponse__Output,
} from './switchyard/workflow/v1/ListWorkPackagesResponse.js';
import type {
  OutputChunk as _switchyard_workflow_v1_OutputChunk,
  OutputChunk__Output as _switchyard_workflow_v1_OutputChunk__Output,
} from './switchyard/workflow/v1/OutputChunk.js';
import type {
  Prompt as _switchyard_workflow_v1_Prompt,
  Prompt__Output as _switchyard_workflow_v1_Prompt__Output,
} from './switchyard/workflow/v1/Prompt.js';
import type {
  ReceivePromptsRequest as _switchyard_workflow_v1_ReceivePromptsRequest,
  ReceivePromptsRequest__Output as _switchyard_workflow_v1_ReceivePromptsRequest__Output,
} from './switchyard/workflow/v1/ReceivePromptsRequest.js';
import type {
  RegisterAgentRequest as _switchyard_workflow_v1_RegisterAgentRequest,
  RegisterAgentRequest__Output as _switchyard_workflow_v1_RegisterAgentRequest__Output,
} from './switchyard/workflow/v1/RegisterAgentRequest.js';
import type {
  RegisterAgentResponse as _switchyard_workflow_v1_RegisterAgentResponse,
  RegisterAgentResponse__Output as _switchyard_workflow_v1_RegisterAgentResponse__Output,
} from './switchyard/workflow/v1/RegisterAgentResponse.js';
import type {
  Session as _switchyard_workflow_v1_Session,
  Session__Output as _switchyard_workflow_v1_Session__Output,
} from './switchyard/workflow/v1/Session.js';
import type {
  StartSessionRequest as _switchyard_workflow_v1_StartSessionRequest,
  StartSessionRequest__Output as _switchyard_workflow_v1_StartSessionRequest__Output,
} from './switchyard/workflow/v1/StartSessionRequest.js';
import type {
  StreamAgentEventsRequest as _switchyard_workflow_v1_StreamAgentEventsRequest,
  StreamAgentEventsRequest__Output as _switchyard_workflow_v1_StreamAgentEventsRequest__Output,
} from './switchyard/workflow/v1/StreamAgentEventsRequest.js';
import type {
  VerifyAuditChainRequest as _switchyard_workflow_v1_VerifyAuditChainRequest,
  VerifyAuditChainRequest__Output as _switchyard_workflow_v1_VerifyAuditChainRequest__Output,
} from './switchyard/workflow/v1/VerifyAuditChainRequest.js';
import type {
  Violation as _switchyard_workflow_v1_Violation,
  Violation__Output as _switchyard_workflow_v1_Violation__Output,
} from './switchyard/workflow/v1/Violation.js';
import type {
  Wave as _switchyard_workflow_v1_Wave,
  Wave__Output as _switchyard_workflow_v1_Wave__Output,
} from './switchyard/workflow/v1/Wave.js';
import type {
  WorkPackage as _switchyard_workflow_v1_WorkPackage,
  WorkPackage__Output as _switchyard_workflow_v1_WorkPackage__Output,
} from './switchyard/workflow/v1/WorkPackage.js';
import type {
  WorkPackageStatus as _switchyard_workflow_v1_WorkPackageStatus,
  WorkPackageStatus__Output as _switchyard_workflow_v1_WorkPackageStatus__Output,
} from './switchyard/workflow/v1/WorkPackageStatus.js';

// biome-ignore lint/suspicious/noExplicitAny: generated by proto-loader-gen-types
type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new (...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  google: {
    protobuf: {
      ListValue: MessageTypeDefinition<_google_protobuf_ListValue, _google_protobuf_ListValue__Output>;
      NullValue: EnumTypeDefinition;
      Struct: MessageTypeDefinition<_google_protobuf_Struct, _google_protobuf_Struct__Output>;
      Value: MessageTypeDefinition<_google_protobuf_Value, _google_protobuf_Value__Output>;
    };
  };
  switchyard: {
    workflow: {
      v1: {
        Ack: MessageTypeDefinition<_switchyard_workflow_v1_Ack, _switchyard_workflow_v1_Ack__Output>;
        AgentEvent: MessageTypeDefinition<_switchyard_workflow_v1_AgentEvent, _switchyard_workflow_v1_AgentEvent__Output>;
        AgentService: SubtypeConstructor<typeof grpc.Client, _switchyard_workflow_v1_AgentServiceClient> & {
          service: _switchyard_workflow_v1_AgentServiceDefinition;
        };
        AuditEntry: MessageTypeDefinition<_switchyard_workflow_v1_AuditEntry, _switchyard_workflow_v1_AuditEntry__Output>;
        AuditVerification: MessageTypeDefinition<
          _switchyard_workflow_v1_AuditVerification,
          _switchyard_workflow_v1_AuditVerification__Output
        >;
        CheckGovernanceGateRequest: MessageTypeDefinition<
          _switchyard_workflow_v1_CheckGovernanceGateRequest,
          _switchyard_workflow_v1_CheckGovernanceGateRequest__Output
        >;
        CompleteTaskRequest: MessageTypeDefinition<
          _switchyard_workflow_v1_CompleteTaskRequest,
          _switchyard_workflow_v1_CompleteTaskRequest__Output
        >;
        CoreService: SubtypeConstructor<typeof grpc.Client, _switchyard_workflow_v1_CoreServiceClient> & {
          service: _switchyard_workflow_v1_CoreServiceDefinition;
        };
        DispatchCommandRequest: MessageTypeDefinition<
          _switchyard_workflow_v1_DispatchCommandRequest,
          _switchyard_workflow_v1_DispatchCommandRequest__Output
        >;
        DispatchCommandResponse: MessageTypeDefinition<
          _switchyard_workflow_v1_DispatchCommandResponse,
          _switchyard_workflow_v1_DispatchCommandResponse__Output
        >;
        DispatchError: MessageTypeDefinition<_switchyard_workflow_v1_DispatchError, _switchyard_workflow_v1_DispatchError__Output>;
        EndSessionRequest: MessageTypeDefinition<
          _switchyard_workflow_v1_EndSessionRequest,
          _switchyard_workflow_v1_EndSessionRequest__Output
        >;
        Feature: MessageTypeDefinition<_switchyard_workflow_v1_Feature, _switchyard_workflow_v1_Feature__Output>;
        FeatureStateResponse: MessageTypeDefinition<
          _switchyard_workflow_v1_FeatureStateResponse,
          _switchyard_workflow_v1_FeatureStateResponse__Output
        >;
        GateResult: MessageTypeDefinition<_switchyard_workflow_v1_GateResult, _switchyard_workflow_v1_GateResult__Output>;
        GetAuditTrailRequest: MessageTypeDefinition<
          _switchyard_workflow_v1_GetAuditTrailRequest,
          _switchyard_workflow_v1_GetAuditTrailRequest__Output
        >;
        GetFeatureRequest: MessageTypeDefinition<
          _switchyard_workflow_v1_GetFeatureRequest,
          _switchyard_workflow_v1_GetFeatureRequest__Output
        >;
        GetWorkPackageStatusRequest: MessageTypeDefinition<
          _switchyard_workflow_v1_GetWorkPackageStatusRequest,
          _switchyard_workflow_v1_GetWorkPackageStatusRequest__Output
        >;
        HeartbeatRequest: MessageTypeDefinition<_switchyard_workflow_v1_HeartbeatRequest, _switchyard_workflow_v1_HeartbeatRequest__Output>;
        HeartbeatResponse: MessageTypeDefinition<
          _switchyard_workflow_v1_HeartbeatResponse,
          _switchyard_workflow_v1_HeartbeatResponse__Output
        >;
        ListFeaturesRequest: MessageTypeDefinition<
          _switchyard_workflow_v1_ListFeaturesRequest,
          _switchyard_workflow_v1_ListFeaturesRequest__Output
        >;
        ListFeaturesResponse: MessageTypeDefinition<
          _switchyard_workflow_v1_ListFeaturesResponse,
          _switchyard_workflow_v1_ListFeaturesResponse__Output
        >;
        ListWorkPackagesRequest: MessageTypeDefinition<
          _switchyard_workflow_v1_ListWorkPackagesRequest,
          _switchyard_workflow_v1_ListWorkPackagesRequest__Output
        >;
        ListWorkPackagesResponse: MessageTypeDefinition<
          _switchyard_workflow_v1_ListWorkPackagesResponse,
          _switchyard_workflow_v1_ListWorkPackagesResponse__Output
        >;
        OutputChunk: MessageTypeDefinition<_switchyard_workflow_v1_OutputChunk, _switchyard_workflow_v1_OutputChunk__Output>;
        Prompt: MessageTypeDefinition<_switchyard_workflow_v1_Prompt, _switchyard_workflow_v1_Prompt__Output>;
        ReceivePromptsRequest: MessageTypeDefinition<
          _switchyard_workflow_v1_ReceivePromptsRequest,
          _switchyard_workflow_v1_ReceivePromptsRequest__Output
        >;
        RegisterAgentRequest: MessageTypeDefinition<
          _switchyard_workflow_v1_RegisterAgentRequest,
          _switchyard_workflow_v1_RegisterAgentRequest__Output
        >;
        RegisterAgentResponse: MessageTypeDefinition<
          _switchyard_workflow_v1_RegisterAgentResponse,
          _switchyard_workflow_v1_RegisterAgentResponse__Output
        >;
        Session: MessageTypeDefinition<_switchyard_workflow_v1_Session, _switchyard_workflow_v1_Session__Output>;
        StartSessionRequest: MessageTypeDefinition<
          _switchyard_workflow_v1_StartSessionRequest,
          _switchyard_workflow_v1_StartSessionRequest__Output
        >;
        StreamAgentEventsRequest: MessageTypeDefinition<
          _switchyard_workflow_v1_StreamAgentEventsRequest,
          _switchyard_workflow_v1_StreamAgentEventsRequest__Output
        >;
        VerifyAuditChainRequest: MessageTypeDefinition<
          _switchyard_workflow_v1_VerifyAuditChainRequest,
          _switchyard_workflow_v1_VerifyAuditChainRequest__Output
        >;
        Violation: MessageTypeDefinition<_switchyard_workflow_v1_Violation, _switchyard_workflow_v1_Violation__Output>;
        Wave: MessageTypeDefinition<_switchyard_workflow_v1_Wave, _switchyard_workflow_v1_Wave__Output>;
        WorkPackage: MessageTypeDefinition<_switchyard_workflow_v1_WorkPackage, _switchyard_workflow_v1_WorkPackage__Output>;
        WorkPackageStatus: MessageTypeDefinition<
          _switchyard_workflow_v1_WorkPackageStatus,
          _switchyard_workflow_v1_WorkPackageStatus__Output
        >;
      };
    };
  };
}
