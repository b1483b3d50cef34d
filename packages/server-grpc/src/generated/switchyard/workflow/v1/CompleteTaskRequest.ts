// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface CompleteTaskRequest {
  session_id?: string;
  task_id?: string;
  exit_code?: number;
  pr_url?: string;
}

export interface CompleteTaskRequest__Output {
  session_id: string;
  task_id: string;
  exit_code: number;
  pr_url: string;
}
