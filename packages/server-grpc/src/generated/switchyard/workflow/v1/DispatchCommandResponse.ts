// Original file: proto/switchyard/workflow/v1/workflow.proto

import type { Long } from '@grpc/proto-loader';
import type {
  Struct as _google_protobuf_Struct,
  Struct__Output as _google_protobuf_Struct__Output,
} from '../../../google/protobuf/Struct.js';
import type { Value as _google_protobuf_Value, Value__Output as _google_protobuf_Value__Output } from '../../../google/protobuf/Value.js';
import type {
  DispatchError as _switchyard_workflow_v1_DispatchError,
  DispatchError__Output as _switchyard_workflow_v1_DispatchError__Output,
} from './DispatchError.js';

export interface DispatchCommandResponse {
  ok?: boolean;
  command?: string;
  exit_code?: number;
  duration_ms?: number | string | Long;
  result?: _google_protobuf_Value | null;
  error?: _switchyard_workflow_v1_DispatchError | null;
  audit?: _google_protobuf_Struct | null;
  warnings?: string[];
}

export interface DispatchCommandResponse__Output {
  ok: boolean;
  command: string;
  exit_code: number;
  duration_ms: number;
  result: _google_protobuf_Value__Output | null;
  error: _switchyard_workflow_v1_DispatchError__Output | null;
  audit: _google_protobuf_Struct__Output | null;
  warnings: string[];
}
