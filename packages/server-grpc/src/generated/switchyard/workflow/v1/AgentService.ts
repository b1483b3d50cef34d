// Original file: proto/switchyard/workflow/v1/workflow.proto

import type * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type { Ack as _switchyard_workflow_v1_Ack, Ack__Output as _switchyard_workflow_v1_Ack__Output } from './Ack.js';
import type {
  CompleteTaskRequest as _switchyard_workflow_v1_CompleteTaskRequest,
  CompleteTaskRequest__Output as _switchyard_workflow_v1_CompleteTaskRequest__Output,
} from './CompleteTaskRequest.js';
import type {
  EndSessionRequest as _switchyard_workflow_v1_EndSessionRequest,
  EndSessionRequest__Output as _switchyard_workflow_v1_EndSessionRequest__Output,
} from './EndSessionRequest.js';
import type {
  HeartbeatRequest as _switchyard_workflow_v1_HeartbeatRequest,
  HeartbeatRequest__Output as _switchyard_workflow_v1_HeartbeatRequest__Output,
} from './HeartbeatRequest.js';
import type {
  HeartbeatResponse as _switchyard_workflow_v1_HeartbeatResponse,
  HeartbeatResponse__Output as _switchyard_workflow_v1_HeartbeatResponse__Output,
} from './HeartbeatResponse.js';
import type {
  OutputChunk as _switchyard_workflow_v1_OutputChunk,
  OutputChunk__Output as _switchyard_workflow_v1_OutputChunk__Output,
} from './OutputChunk.js';
import type { Prompt as _switchyard_workflow_v1_Prompt, Prompt__Output as _switchyard_workflow_v1_Prompt__Output } from './Prompt.js';
import type {
  ReceivePromptsRequest as _switchyard_workflow_v1_ReceivePromptsRequest,
  ReceivePromptsRequest__Output as _switchyard_workflow_v1_ReceivePromptsRequest__Output,
} from './ReceivePromptsRequest.js';
import type {
  RegisterAgentRequest as _switchyard_workflow_v1_RegisterAgentRequest,
  RegisterAgentRequest__Output as _switchyard_workflow_v1_RegisterAgentRequest__Output,
} from './RegisterAgentRequest.js';
import type {
  RegisterAgentResponse as _switchyard_workflow_v1_RegisterAgentResponse,
  RegisterAgentResponse__Output as _switchyard_workflow_v1_RegisterAgentResponse__Output,
} from './RegisterAgentResponse.js';
import type { Session as _switchyard_workflow_v1_Session, Session__Output as _switchyard_workflow_v1_Session__Output } from './Session.js';
import type {
  StartSessionRequest as _switchyard_workflow_v1_StartSessionRequest,
  StartSessionRequest__Output as _switchyard_workflow_v1_StartSessionRequest__Output,
} from './StartSessionRequest.js';

export interface AgentServiceClient extends grpc.Client {
  CompleteTask(
    argument: _switchyard_workflow_v1_CompleteTaskRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  CompleteTask(
    argument: _switchyard_workflow_v1_CompleteTaskRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  CompleteTask(
    argument: _switchyard_workflow_v1_CompleteTaskRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  CompleteTask(
    argument: _switchyard_workflow_v1_CompleteTaskRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  completeTask(
    argument: _switchyard_workflow_v1_CompleteTaskRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  completeTask(
    argument: _switchyard_workflow_v1_CompleteTaskRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  completeTask(
    argument: _switchyard_workflow_v1_CompleteTaskRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  completeTask(
    argument: _switchyard_workflow_v1_CompleteTaskRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;

  EndSession(
    argument: _switchyard_workflow_v1_EndSessionRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  EndSession(
    argument: _switchyard_workflow_v1_EndSessionRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  EndSession(
    argument: _switchyard_workflow_v1_EndSessionRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  EndSession(
    argument: _switchyard_workflow_v1_EndSessionRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  endSession(
    argument: _switchyard_workflow_v1_EndSessionRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  endSession(
    argument: _switchyard_workflow_v1_EndSessionRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  endSession(
    argument: _switchyard_workflow_v1_EndSessionRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  endSession(
    argument: _switchyard_workflow_v1_EndSessionRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;

  Heartbeat(
    argument: _switchyard_workflow_v1_HeartbeatRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  Heartbeat(
    argument: _switchyard_workflow_v1_HeartbeatRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  Heartbeat(
    argument: _switchyard_workflow_v1_HeartbeatRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  Heartbeat(
    argument: _switchyard_workflow_v1_HeartbeatRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  heartbeat(
    argument: _switchyard_workflow_v1_HeartbeatRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  heartbeat(
    argument: _switchyard_workflow_v1_HeartbeatRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  heartbeat(
    argument: _switchyard_workflow_v1_HeartbeatRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;
  heartbeat(
    argument: _switchyard_workflow_v1_HeartbeatRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_HeartbeatResponse__Output>,
  ): grpc.ClientUnaryCall;

  ReceivePrompts(
    argument: _switchyard_workflow_v1_ReceivePromptsRequest,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_switchyard_workflow_v1_Prompt__Output>;
  ReceivePrompts(
    argument: _switchyard_workflow_v1_ReceivePromptsRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_switchyard_workflow_v1_Prompt__Output>;
  receivePrompts(
    argument: _switchyard_workflow_v1_ReceivePromptsRequest,
    metadata: grpc.Metadata,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_switchyard_workflow_v1_Prompt__Output>;
  receivePrompts(
    argument: _switchyard_workflow_v1_ReceivePromptsRequest,
    options?: grpc.CallOptions,
  ): grpc.ClientReadableStream<_switchyard_workflow_v1_Prompt__Output>;

  RegisterAgent(
    argument: _switchyard_workflow_v1_RegisterAgentRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_RegisterAgentResponse__Output>,
  ): grpc.ClientUnaryCall;
  RegisterAgent(
    argument: _switchyard_workflow_v1_RegisterAgentRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_RegisterAgentResponse__Output>,
  ): grpc.ClientUnaryCall;
  RegisterAgent(
    argument: _switchyard_workflow_v1_RegisterAgentRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_RegisterAgentResponse__Output>,
  ): grpc.ClientUnaryCall;
  RegisterAgent(
    argument: _switchyard_workflow_v1_RegisterAgentRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_RegisterAgentResponse__Output>,
  ): grpc.ClientUnaryCall;
  registerAgent(
    argument: _switchyard_workflow_v1_RegisterAgentRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_RegisterAgentResponse__Output>,
  ): grpc.ClientUnaryCall;
  registerAgent(
    argument: _switchyard_workflow_v1_RegisterAgentRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_RegisterAgentResponse__Output>,
  ): grpc.ClientUnaryCall;
  registerAgent(
    argument: _switchyard_workflow_v1_RegisterAgentRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_RegisterAgentResponse__Output>,
  ): grpc.ClientUnaryCall;
  registerAgent(
    argument: _switchyard_workflow_v1_RegisterAgentRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_RegisterAgentResponse__Output>,
  ): grpc.ClientUnaryCall;

  ReportOutput(
    argument: _switchyard_workflow_v1_OutputChunk,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  ReportOutput(
    argument: _switchyard_workflow_v1_OutputChunk,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  ReportOutput(
    argument: _switchyard_workflow_v1_OutputChunk,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  ReportOutput(
    argument: _switchyard_workflow_v1_OutputChunk,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  reportOutput(
    argument: _switchyard_workflow_v1_OutputChunk,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  reportOutput(
    argument: _switchyard_workflow_v1_OutputChunk,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  reportOutput(
    argument: _switchyard_workflow_v1_OutputChunk,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;
  reportOutput(
    argument: _switchyard_workflow_v1_OutputChunk,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Ack__Output>,
  ): grpc.ClientUnaryCall;

  StartSession(
    argument: _switchyard_workflow_v1_StartSessionRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Session__Output>,
  ): grpc.ClientUnaryCall;
  StartSession(
    argument: _switchyard_workflow_v1_StartSessionRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Session__Output>,
  ): grpc.ClientUnaryCall;
  StartSession(
    argument: _switchyard_workflow_v1_StartSessionRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Session__Output>,
  ): grpc.ClientUnaryCall;
  StartSession(
    argument: _switchyard_workflow_v1_StartSessionRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Session__Output>,
  ): grpc.ClientUnaryCall;
  startSession(
    argument: _switchyard_workflow_v1_StartSessionRequest,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Session__Output>,
  ): grpc.ClientUnaryCall;
  startSession(
    argument: _switchyard_workflow_v1_StartSessionRequest,
    metadata: grpc.Metadata,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Session__Output>,
  ): grpc.ClientUnaryCall;
  startSession(
    argument: _switchyard_workflow_v1_StartSessionRequest,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Session__Output>,
  ): grpc.ClientUnaryCall;
  startSession(
    argument: _switchyard_workflow_v1_StartSessionRequest,
    callback: grpc.requestCallback<_switchyard_workflow_v1_Session__Output>,
  ): grpc.ClientUnaryCall;
}

export interface AgentServiceHandlers extends grpc.UntypedServiceImplementation {
  CompleteTask: grpc.handleUnaryCall<_switchyard_workflow_v1_CompleteTaskRequest__Output, _switchyard_workflow_v1_Ack>;

  EndSession: grpc.handleUnaryCall<_switchyard_workflow_v1_EndSessionRequest__Output, _switchyard_workflow_v1_Ack>;

  Heartbeat: grpc.handleUnaryCall<_switchyard_workflow_v1_HeartbeatRequest__Output, _switchyard_workflow_v1_HeartbeatResponse>;

  ReceivePrompts: grpc.handleServerStreamingCall<_switchyard_workflow_v1_ReceivePromptsRequest__Output, _switchyard_workflow_v1_Prompt>;

  RegisterAgent: grpc.handleUnaryCall<_switchyard_workflow_v1_RegisterAgentRequest__Output, _switchyard_workflow_v1_RegisterAgentResponse>;

  ReportOutput: grpc.handleUnaryCall<_switchyard_workflow_v1_OutputChunk__Output, _switchyard_workflow_v1_Ack>;

  StartSession: grpc.handleUnaryCall<_switchyard_workflow_v1_StartSessionRequest__Output, _switchyard_workflow_v1_Session>;
}

export interface AgentServiceDefinition extends grpc.ServiceDefinition {
  CompleteTask: MethodDefinition<
    _switchyard_workflow_v1_CompleteTaskRequest,
    _switchyard_workflow_v1_Ack,
    _switchyard_workflow_v1_CompleteTaskRequest__Output,
    _switchyard_workflow_v1_Ack__Output
  >;
  EndSession: MethodDefinition<
    _switchyard_workflow_v1_EndSessionRequest,
    _switchyard_workflow_v1_Ack,
    _switchyard_workflow_v1_EndSessionRequest__Output,
    _switchyard_workflow_v1_Ack__Output
  >;
  Heartbeat: MethodDefinition<
    _switchyard_workflow_v1_HeartbeatRequest,
    _switchyard_workflow_v1_HeartbeatResponse,
    _switchyard_workflow_v1_HeartbeatRequest__Output,
    _switchyard_workflow_v1_HeartbeatResponse__Output
  >;
  ReceivePrompts: MethodDefinition<
    _switchyard_workflow_v1_ReceivePromptsRequest,
    _switchyard_workflow_v1_Prompt,
    _switchyard_workflow_v1_ReceivePromptsRequest__Output,
    _switchyard_workflow_v1_Prompt__Output
  >;
  RegisterAgent: MethodDefinition<
    _switchyard_workflow_v1_RegisterAgentRequest,
    _switchyard_workflow_v1_RegisterAgentResponse,
    _switchyard_workflow_v1_RegisterAgentRequest__Output,
    _switchyard_workflow_v1_RegisterAgentResponse__Output
  >;
  ReportOutput: MethodDefinition<
    _switchyard_workflow_v1_OutputChunk,
    _switchyard_workflow_v1_Ack,
    _switchyard_workflow_v1_OutputChunk__Output,
    _switchyard_workflow_v1_Ack__Output
  >;
  StartSession: MethodDefinition<
    _switchyard_workflow_v1_StartSessionRequest,
    _switchyard_workflow_v1_Session,
    _switchyard_workflow_v1_StartSessionRequest__Output,
    _switchyard_workflow_v1_Session__Output
  >;
}
