// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface StartSessionRequest {
  agent_id?: string;
}

export interface StartSessionRequest__Output {
  agent_id: string;
}
