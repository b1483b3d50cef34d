// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface RegisterAgentResponse {
  agent_id?: string;
}

export interface RegisterAgentResponse__Output {
  agent_id: string;
}
