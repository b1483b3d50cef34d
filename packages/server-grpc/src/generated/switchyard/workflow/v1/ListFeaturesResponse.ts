// Original file: proto/switchyard/workflow/v1/workflow.proto

import type { Feature as _switchyard_workflow_v1_Feature, Feature__Output as _switchyard_workflow_v1_Feature__Output } from './Feature.js';

export interface ListFeaturesResponse {
  features?: _switchyard_workflow_v1_Feature[];
}

export interface ListFeaturesResponse__Output {
  features: _switchyard_workflow_v1_Feature__Output[];
}
