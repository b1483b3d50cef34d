// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface ListWorkPackagesRequest {
  slug?: string;
}

export interface ListWorkPackagesRequest__Output {
  slug: string;
}
