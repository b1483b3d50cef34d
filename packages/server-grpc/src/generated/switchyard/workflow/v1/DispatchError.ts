// Original file: proto/switchyard/workflow/v1/workflow.proto

import type {
  Struct as _google_protobuf_Struct,
  Struct__Output as _google_protobuf_Struct__Output,
} from '../../../google/protobuf/Struct.js';

export interface DispatchError {
  code?: string;
  message?: string;
  details?: _google_protobuf_Struct | null;
}

export interface DispatchError__Output {
  code: string;
  message: string;
  details: _google_protobuf_Struct__Output | null;
}
