// Original file: proto/switchyard/workflow/v1/workflow.proto

import type {
  WorkPackage as _switchyard_workflow_v1_WorkPackage,
  WorkPackage__Output as _switchyard_workflow_v1_WorkPackage__Output,
} from './WorkPackage.js';

export interface WorkPackageStatus {
  work_package?: _switchyard_workflow_v1_WorkPackage | null;
  ready?: boolean;
  waiting_on?: number[];
  active_job_id?: string;
  _active_job_id?: 'active_job_id';
}

export interface WorkPackageStatus__Output {
  work_package: _switchyard_workflow_v1_WorkPackage__Output | null;
  ready: boolean;
  waiting_on: number[];
  active_job_id?: string;
  _active_job_id?: 'active_job_id';
}
