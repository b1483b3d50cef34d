// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface RegisterAgentRequest {
  name?: string;
  agent_type?: string;
  capabilities?: string[];
}

export interface RegisterAgentRequest__Output {
  name: string;
  agent_type: string;
  capabilities: string[];
}
