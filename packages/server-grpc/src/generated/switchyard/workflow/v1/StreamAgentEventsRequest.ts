// Original file: proto/switchyard/workflow/v1/workflow.proto

import type { Long } from '@grpc/proto-loader';

export interface StreamAgentEventsRequest {
  job_id?: string;
  feature_slug?: string;
  after_event_id?: number | string | Long;
}

export interface StreamAgentEventsRequest__Output {
  job_id: string;
  feature_slug: string;
  after_event_id: number;
}
