// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface GetWorkPackageStatusRequest {
  slug?: string;
  sequence?: number;
}

export interface GetWorkPackageStatusRequest__Output {
  slug: string;
  sequence: number;
}
