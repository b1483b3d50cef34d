/**
 * @module requestState
 * What one request remembers across its attempts: the providers and
 * credentials it has used up, the providers that failed with a server error
 * (they get a second round once every candidate failed), the last failure
 * (what the client hears when nothing succeeds), the quota that stopped it,
 * and the provider failures held back until the request shows whether a
 * sibling credential recovered them. `Relay.handle` makes one per request and threads it through picking,
 * the quota hooks and the attempt recorder, which all read and extend it.
 */
import type { QuotaHit } from './quotaPolicy.js';
import type { RelayCredential, UpstreamFailure } from './types.js';

/** One request's memory of its attempts. */
export interface RequestState {
  exhausted: Set<string>;
  serverFailed: Set<string>;
  noCredentials: Set<string>;
  triedCredentials: Map<string, Set<string>>;
  refreshed: Set<string>;
  attempts: number;
  lastFailure: UpstreamFailure | undefined;
  /** The last quota that stopped a credential or a provider in this request. */
  quota: QuotaHit | undefined;
  /** Quota ends the request here (switch-project is off). */
  quotaStop: boolean;
  previewTried: boolean;
  /**
   * Server errors, timeouts and broken connections of attempts made with a pool's credential, by
   * provider, not yet counted towards the provider's cooldown: if another credential of the same
   * provider then answers, they were the credential's (the pool cools it), not the provider's.
   * Created on the first such failure: most requests never fail.
   */
  heldProviderFailures: Map<string, UpstreamFailure[]> | undefined;
}

/** An attempt decided before the loop gets to it: a refreshed credential, or the preview-model retry. */
export interface PinnedAttempt {
  provider: string;
  credential: RelayCredential | undefined;
  upstreamModel?: string | undefined;
  /** The preview-model retry (it may go past the attempt budget, and is the last attempt). */
  preview?: boolean;
}

/** A request's state before its first attempt. */
export function newRequestState(): RequestState {
  return {
    exhausted: new Set(),
    serverFailed: new Set(),
    noCredentials: new Set(),
    triedCredentials: new Map(),
    refreshed: new Set(),
    attempts: 0,
    lastFailure: undefined,
    quota: undefined,
    quotaStop: false,
    previewTried: false,
    heldProviderFailures: undefined,
  };
}
