// Original file: proto/switchyard/workflow/v1/workflow.proto

import type { Long } from '@grpc/proto-loader';

export interface Session {
  session_id?: string;
  agent_id?: string;
  heartbeat_interval_ms?: number | string | Long;
  started_at?: string;
}

export interface Session__Output {
  session_id: string;
  agent_id: string;
  heartbeat_interval_ms: number;
  started_at: string;
}
