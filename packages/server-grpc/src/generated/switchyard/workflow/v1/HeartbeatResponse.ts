// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface HeartbeatResponse {
  state?: string;
  task_id?: string;
  _task_id?: 'task_id';
}

export interface HeartbeatResponse__Output {
  state: string;
  task_id?: string;
  _task_id?: 'task_id';
}
