// Original file: proto/switchyard/workflow/v1/workflow.proto

export interface Ack {
  ok?: boolean;
}

export interface Ack__Output {
  ok: boolean;
}
