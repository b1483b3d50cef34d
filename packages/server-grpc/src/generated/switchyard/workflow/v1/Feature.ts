// Original file: proto/switchyard/workflow/v1/workflow.proto

import type { Long } from '@grpc/proto-loader';

export interface Feature {
  id?: number | string | Long;
  slug?: string;
  title?: string;
  description?: string;
  state?: string;
  target_branch?: string;
  created_at?: string;
  updated_at?: string;
}

export interface Feature__Output {
  id: number;
  slug: string;
  title: string;
  description: string;
  state: string;
  target_branch: string;
  created_at: string;
  updated_at: string;
}
