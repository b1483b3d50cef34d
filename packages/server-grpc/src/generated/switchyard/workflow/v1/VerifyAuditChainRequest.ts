// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface VerifyAuditChainRequest {
  slug?: string;
}

export interface VerifyAuditChainRequest__Output {
  slug: string;
}
