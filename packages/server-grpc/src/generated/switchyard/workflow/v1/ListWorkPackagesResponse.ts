// Original file: proto/switchyard/workflow/v1/workflow.proto

import type { Wave as _switchyard_workflow_v1_Wave, Wave__Output as _switchyard_workflow_v1_Wave__Output } from './Wave.js';
import type {
  WorkPackage as _switchyard_workflow_v1_WorkPackage,
  WorkPackage__Output as _switchyard_workflow_v1_WorkPackage__Output,
} from './WorkPackage.js';

export interface ListWorkPackagesResponse {
  work_packages?: _switchyard_workflow_v1_WorkPackage[];
  waves?: _switchyard_workflow_v1_Wave[];
}

export interface ListWorkPackagesResponse__Output {
  work_packages: _switchyard_workflow_v1_WorkPackage__Output[];
  waves: _switchyard_workflow_v1_Wave__Output[];
}
