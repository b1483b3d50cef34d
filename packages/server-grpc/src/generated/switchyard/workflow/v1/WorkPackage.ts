// Original file: proto/switchyard/workflow/v1/workflow.proto

import type { Long } from '@grpc/proto-loader';

export interface WorkPackage {
  id?: number | string | Long;
  feature_id?: number | string | Long;
  sequence?: number;
  title?: string;
  state?: string;
  depends_on?: number[];
  file_scope?: string[];
  agent_id?: string;
  pr_url?: string;
  created_at?: string;
  updated_at?: string;
  _agent_id?: 'agent_id';
  _pr_url?: 'pr_url';
}

export interface WorkPackage__Output {
  id: number;
  feature_id: number;
  sequence: number;
  title: string;
  state: string;
  depends_on: number[];
  file_scope: string[];
  agent_id?: string;
  pr_url?: string;
  created_at: string;
  updated_at: string;
  _agent_id?: 'agent_id';
  _pr_url?: 'pr_url';
}
