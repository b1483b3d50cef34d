// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface ReceivePromptsRequest {
  session_id?: string;
}

export interface ReceivePromptsRequest__Output {
  session_id: string;
}
