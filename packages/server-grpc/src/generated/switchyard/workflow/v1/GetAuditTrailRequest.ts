// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface GetAuditTrailRequest {
  slug?: string;
  limit?: number;
  since?: string;
}

export interface GetAuditTrailRequest__Output {
  slug: string;
  limit: number;
  since: string;
}
