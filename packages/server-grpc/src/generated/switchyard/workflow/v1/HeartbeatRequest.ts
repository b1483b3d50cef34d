// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface HeartbeatRequest {
  session_id?: string;
}

export interface HeartbeatRequest__Output {
  session_id: string;
}
