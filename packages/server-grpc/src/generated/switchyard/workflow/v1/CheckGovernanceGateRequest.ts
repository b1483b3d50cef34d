// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface CheckGovernanceGateRequest {
  slug?: string;
  wp_sequence?: number;
  to?: string;
  _wp_sequence?: 'wp_sequence';
  _to?: 'to';
}

export interface CheckGovernanceGateRequest__Output {
  slug: string;
  wp_sequence?: number;
  to?: string;
  _wp_sequence?: 'wp_sequence';
  _to?: 'to';
}
