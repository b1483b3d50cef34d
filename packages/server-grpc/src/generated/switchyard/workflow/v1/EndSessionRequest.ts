// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface EndSessionRequest {
  session_id?: string;
  reason?: string;
}

export interface EndSessionRequest__Output {
  session_id: string;
  reason: string;
}
