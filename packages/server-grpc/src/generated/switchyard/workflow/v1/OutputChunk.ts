// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface OutputChunk {
  session_id?: string;
  task_id?: string;
  chunk?: string;
}

export interface OutputChunk__Output {
  session_id: string;
  task_id: string;
  chunk: string;
}
