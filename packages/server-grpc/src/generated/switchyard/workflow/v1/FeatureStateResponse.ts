// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface FeatureStateResponse {
  slug?: string;
  state?: string;
  next_state?: string;
  next_command?: string;
  updated_at?: string;
  _next_state?: 'next_state';
  _next_command?: 'next_command';
}

export interface FeatureStateResponse__Output {
  slug: string;
  state: string;
  next_state?: string;
  next_command?: string;
  updated_at: string;
  _next_state?: 'next_state';
  _next_command?: 'next_command';
}
