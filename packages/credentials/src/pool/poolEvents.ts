/**
 * @module poolEvents
 * The typed events of a credential pool. Payloads carry ids, never tokens,
 * so servers and metrics may log and forward them as they are.
 */
import type { CredentialStatus, CredentialType } from '../credential.js';
import type { QuotaUpdateEvent } from './quotaTracker.js';

/** Why a pool moved on from a credential. */
export type RotationReason = 'exhausted' | 'expired' | 'rate_limited' | 'error' | 'disabled';

/** A credential handed out by `acquire()`: what a request needs, nothing more. */
export interface AcquiredCredential {
  readonly id: string;
  readonly provider: string;
  readonly token: string;
  readonly type: CredentialType;
  /** The credential's non-secret OAuth parameters (e.g. `api_base_url`); empty for API keys. */
  readonly metadata: Readonly<Record<string, string>>;
}

/** Events of a {@link CredentialPool}. */
export interface PoolEvents {
  /** A request got another credential than the one that just became unusable. */
  'credential:rotated': [{ provider: string; from: string; to: string; reason: RotationReason }];
  /** A credential's effective status changed. */
  'credential:status': [
    { provider: string; credentialId: string; status: CredentialStatus; previous: CredentialStatus | null; message: string | null },
  ];
  'quota:update': [QuotaUpdateEvent];
  'cooldown:start': [{ provider: string; credentialId: string; until: number; reason: string }];
  'cooldown:end': [{ provider: string; credentialId: string }];
  /** A credential joined the pool, or its stored record changed. */
  'credential:upsert': [{ provider: string; credentialId: string; revision: number }];
  'credential:delete': [{ provider: string; credentialId: string }];
}

/** A failure reported by the relay for one request. */
export interface CredentialFailure {
  /** 429 (`rate_limit`), 401 (`unauthorized`), quota gone upstream (`quota_exceeded`), anything else (`error`). */
  kind: 'rate_limit' | 'unauthorized' | 'quota_exceeded' | 'error';
  /** The upstream's `Retry-After`, in milliseconds. */
  retryAfterMs?: number;
  /** Shown in status records; must not contain a token. */
  message?: string;
}

/** Token usage of one request. */
export interface CredentialUsage {
  inputTokens: number;
  outputTokens: number;
}
