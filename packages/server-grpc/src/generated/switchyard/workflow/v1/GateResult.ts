// Original file: proto/switchyard/workflow/v1/workflow.proto

import type {
  Violation as _switchyard_workflow_v1_Violation,
  Violation__Output as _switchyard_workflow_v1_Violation__Output,
} from './Violation.js';

export interface GateResult {
  passed?: boolean;
  transition?: string;
  violations?: _switchyard_workflow_v1_Violation[];
}

export interface GateResult__Output {
  passed: boolean;
  transition: string;
  violations: _switchyard_workflow_v1_Violation__Output[];
}
