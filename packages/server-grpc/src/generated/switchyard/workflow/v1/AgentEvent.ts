// Original file: proto/switchyard/workflow/v1/workflow.proto

import type { Long } from '@grpc/proto-loader';
import type {
  Struct as _google_protobuf_Struct,
  Struct__Output as _google_protobuf_Struct__Output,
} from '../../../google/protobuf/Struct.js';

export interface AgentEvent {
  job_id?: string;
  feature_slug?: string;
  wp_sequence?: number;
  kind?: string;
  data?: _google_protobuf_Struct | null;
  at?: number | string | Long;
  id?: number | string | Long;
}

export interface AgentEvent__Output {
  job_id: string;
  feature_slug: string;
  wp_sequence: number;
  kind: string;
  data: _google_protobuf_Struct__Output | null;
  at: number;
  id: number;
}
