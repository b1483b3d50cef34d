// Original file: proto/switchyard/workflow/v1/workflow.proto

import type {
  Struct as _google_protobuf_Struct,
  Struct__Output as _google_protobuf_Struct__Output,
} from '../../../google/protobuf/Struct.js';

export interface DispatchCommandRequest {
  feature_slug?: string;
  args?: _google_protobuf_Struct | null;
}

export interface DispatchCommandRequest__Output {
  feature_slug: string;
  args: _google_protobuf_Struct__Output | null;
}
