// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface GetFeatureRequest {
  slug?: string;
}

export interface GetFeatureRequest__Output {
  slug: string;
}
