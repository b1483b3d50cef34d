// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface Wave {
  sequences?: number[];
}

export interface Wave__Output {
  sequences: number[];
}
