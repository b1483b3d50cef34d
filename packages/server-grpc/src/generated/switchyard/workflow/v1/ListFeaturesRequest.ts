// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface ListFeaturesRequest {
  state?: string;
}

export interface ListFeaturesRequest__Output {
  state: string;
}
