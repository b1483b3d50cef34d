// Original file: proto/switchyard/workflow/v1/workflow.proto

import type { Long } from '@grpc/proto-loader';

export interface AuditVerification {
  valid?: boolean;
  entries_verified?: number | string | Long;
  first_invalid_id?: number | string | Long;
  error_message?: string;
  error_code?: string;
  root?: string;
  origin?: string;
  _first_invalid_id?: 'first_invalid_id';
  _error_message?: 'error_message';
  _error_code?: 'error_code';
}

export interface AuditVerification__Output {
  valid: boolean;
  entries_verified: number;
  first_invalid_id?: number;
  error_message?: string;
  error_code?: string;
  root: string;
  origin: string;
  _first_invalid_id?: 'first_invalid_id';
  _error_message?: 'error_message';
  _error_code?: 'error_code';
}
