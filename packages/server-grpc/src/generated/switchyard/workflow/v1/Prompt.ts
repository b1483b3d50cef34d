// Original file: proto/switchyard/workflow/v1/workflow.proto

import type { Long } from '@grpc/proto-loader';

export interface Prompt {
  task_id?: string;
  kind?: string;
  feature_slug?: string;
  wp_sequence?: number;
  attempt?: number;
  prompt?: string;
  context?: string;
  worktree?: string;
  timeout_ms?: number | string | Long;
}

export interface Prompt__Output {
  task_id: string;
  kind: string;
  feature_slug: string;
  wp_sequence: number;
  attempt: number;
  prompt: string;
  context: string;
  worktree: string;
  timeout_ms: number;
}
