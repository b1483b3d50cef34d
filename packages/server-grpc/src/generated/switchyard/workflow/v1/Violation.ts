// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface Violation {
  rule_id?: string;
  message?: string;
  remediation?: string;
}

export interface Violation__Output {
  rule_id: string;
  message: string;
  remediation: string;
}
