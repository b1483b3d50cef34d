// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface StreamAgentEventsRequest {
  job_id?: string;
  feature_slug?: string;
}

export interface StreamAgentEventsRequest__Output {
  job_id: string;
  feature_slug: string;
}
