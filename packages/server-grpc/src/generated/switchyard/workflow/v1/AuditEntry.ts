// Original file: proto/switchyard/workflow/v1/workflow.proto

import type { Long } from '@grpc/proto-loader';
import type {
  Struct as _google_protobuf_Struct,
  Struct__Output as _google_protobuf_Struct__Output,
} from '../../../google/protobuf/Struct.js';

export interface AuditEntry {
  id?: number | string | Long;
  feature_slug?: string;
  wp_sequence?: number;
  timestamp?: string;
  actor?: string;
  transition?: string;
  evidence_refs?: (number | string | Long)[];
  action?: string;
  prev_hash?: string;
  hash?: string;
  forced?: boolean;
  detail?: _google_protobuf_Struct | null;
  _wp_sequence?: 'wp_sequence';
}

export interface AuditEntry__Output {
  id: number;
  feature_slug: string;
  wp_sequence?: number;
  timestamp: string;
  actor: string;
  transition: string;
  evidence_refs: number[];
  action: string;
  prev_hash: string;
  hash: string;
  forced: boolean;
  detail: _google_protobuf_Struct__Output | null;
  _wp_sequence?: 'wp_sequence';
}
