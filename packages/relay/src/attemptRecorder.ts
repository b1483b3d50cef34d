/**
 * @module attemptRecorder
 * Tells the parts that remember how providers behave how an attempt went:
 * the credential pool (usage, the failure that may cool a credential, or
 * both for a stream broken after its first byte), the provider cooldowns
 * and health monitor (server errors, timeouts and refused connections count
 * against a provider; a 429 only when there is no pool to take it per
 * credential; a client that left counts against nobody), and the routing
 * table (latency).
 *
 * A provider's cooldown counts only failures the provider did not recover:
 * a server error, timeout or broken connection with one of a pool's
 * credentials is held in the request's state, dropped if another credential
 * of the same provider then answers the request (the failure was the
 * credential's, and the pool cools that credential), and counted when the
 * request ends otherwise. So one flaky credential among healthy ones does
 * not cool its provider, and a provider whose every credential fails does.
 * The health monitor's request statistics hear every failure at once.
 *
 * From a failure it also decides what is left for this request: a 401 on an
 * OAuth credential gets one refresh and the same provider again; otherwise
 * the credential, and after a server error the provider, are used up.
 */
import type { QuotaHooks } from './quotaHooks.js';
import type { RelayContext, RelayCooldowns } from './relayOptions.js';
import type { RequestState } from './requestState.js';
import type { RelayCredential, UpstreamFailure, Usage } from './types.js';

/** What the relay knows of a stream broken after its first byte, besides its failure. */
export interface BrokenAttempt {
  /** The tokens the stream reported before it broke. */
  usage: Usage | undefined;
  /** The attempt's quota reservation (cluster mode), settled here. */
  reservation: string | undefined;
}

/** Records attempts' outcomes for a relay; one per relay. */
export class AttemptRecorder {
  constructor(
    private readonly ctx: RelayContext,
    private readonly quota: QuotaHooks,
  ) {}

  /** The client has its answer. */
  success(
    provider: string,
    credential: RelayCredential | undefined,
    usage: Usage | undefined,
    latencyMs: number,
    state: RequestState,
    reservation?: string,
  ): void {
    const { options } = this.ctx;
    if (credential) options.credentials?.pool(provider)?.reportSuccess(credential.id, tokensOf(usage), reservation);
    // A sibling credential answered: what the provider's other credentials failed with was theirs.
    state.heldProviderFailures?.delete(provider);
    options.cooldowns?.recordSuccess(provider);
    options.health?.recordRequest(provider, { ok: true, latencyMs });
    this.ctx.table.recordLatency(provider, latencyMs);
  }

  /**
   * A stream broke after its first byte. Its tokens are the credential's: they are counted, and its
   * reservation settled, without calling the attempt a success (a success would clear the failure
   * streak that the failure below adds to, so broken streams in a row would never cool the
   * credential down). The failure then counts as the same failure before the first byte does in
   * {@link failure}: the credential pool hears every kind but the request's own (a 4xx) — a rate
   * limit, an exhausted quota, a rejected credential, and a server error, timeout or broken
   * connection alike — the relay's quota memory hears that the upstream refused the credential for
   * quota, and the provider's cooldowns and health hear a server error, timeout or broken
   * connection. The client going away (`client_closed`) is no fault of the credential's or the
   * provider's: the pool hears only the tokens.
   */
  broken(
    provider: string,
    credential: RelayCredential | undefined,
    failure: UpstreamFailure,
    attempt: BrokenAttempt,
    state: RequestState,
  ): void {
    const pool = credential ? this.ctx.options.credentials?.pool(provider) : undefined;
    if (attempt.usage && credential && pool) pool.reportUsage(credential.id, tokensOf(attempt.usage), attempt.reservation);
    else this.quota.release(provider, credential, attempt.reservation);
    if (failure.kind === 'client' || failure.kind === 'client_closed') return;
    this.credentialFailure(provider, credential, failure);
    if (failure.kind === 'quota_exceeded') this.quota.refused(provider, credential, state);
    this.providerFailure(provider, failure);
  }

  /**
   * Records an attempt that failed before its first byte; returns a refreshed credential when the
   * same provider should be tried again with it.
   */
  async failure(
    provider: string,
    credential: RelayCredential | undefined,
    failure: UpstreamFailure,
    state: RequestState,
  ): Promise<RelayCredential | undefined> {
    // The client left: nothing is the credential's or the provider's fault (the relay stops here too).
    if (failure.kind === 'client_closed') return undefined;
    const pool = this.ctx.options.credentials?.pool(provider);
    const tried = state.triedCredentials.get(provider) ?? new Set<string>();
    state.triedCredentials.set(provider, tried);
    if (failure.kind === 'unauthorized' && credential && pool && credential.type === 'oauth' && !state.refreshed.has(credential.id)) {
      state.refreshed.add(credential.id);
      try {
        return await pool.refresh(credential.id);
      } catch {
        // Refresh failed: fall through and rotate.
      }
    }
    if (credential) tried.add(credential.id);
    this.credentialFailure(provider, credential, failure);
    if (failure.kind === 'quota_exceeded') this.quota.refused(provider, credential, state);
    if (failure.kind === 'server' || failure.kind === 'timeout' || failure.kind === 'connection') {
      if (credential && pool) this.holdProviderFailure(provider, failure, state);
      else this.providerFailure(provider, failure);
      state.exhausted.add(provider);
      state.serverFailed.add(provider);
    }
    return undefined;
  }

  /** Tells the pool the credential failed; a rate limit with no pool to take it cools the provider down instead. */
  private credentialFailure(provider: string, credential: RelayCredential | undefined, failure: UpstreamFailure): void {
    const pool = this.ctx.options.credentials?.pool(provider);
    if (credential && pool) {
      const kind =
        failure.kind === 'rate_limit' || failure.kind === 'unauthorized' || failure.kind === 'quota_exceeded' ? failure.kind : 'error';
      pool.reportFailure(credential.id, { kind, ...retry(failure), message: failure.message });
    }
    if (failure.kind === 'rate_limit' && !pool)
      this.ctx.options.cooldowns?.recordFailure(provider, { kind: 'rate_limit', ...retry(failure) });
  }

  /** A server error, timeout or refused connection counts against the provider; other failures are the credential's or the client's. */
  private providerFailure(provider: string, failure: UpstreamFailure): void {
    if (failure.kind === 'server' || failure.kind === 'timeout' || failure.kind === 'connection') {
      const { options } = this.ctx;
      countAgainstProvider(options.cooldowns, provider, failure);
      options.health?.recordRequest(provider, { ok: false, latencyMs: 0 });
    }
  }

  /** The health statistics hear the failure now; the cooldown, when the request shows the provider did not recover it. */
  private holdProviderFailure(provider: string, failure: UpstreamFailure, state: RequestState): void {
    this.ctx.options.health?.recordRequest(provider, { ok: false, latencyMs: 0 });
    const held = (state.heldProviderFailures ??= new Map());
    const list = held.get(provider);
    if (list) list.push(failure);
    else held.set(provider, [failure]);
  }

  /** The request is over: the provider failures no sibling credential recovered count towards their providers' cooldowns. */
  settle(state: RequestState): void {
    const held = state.heldProviderFailures;
    if (held === undefined) return;
    state.heldProviderFailures = undefined;
    const cooldowns = this.ctx.options.cooldowns;
    for (const [provider, failures] of held) for (const failure of failures) countAgainstProvider(cooldowns, provider, failure);
  }
}

function countAgainstProvider(cooldowns: RelayCooldowns | undefined, provider: string, failure: UpstreamFailure): void {
  cooldowns?.recordFailure(provider, {
    kind: 'error',
    ...(failure.status !== null ? { status: failure.status } : {}),
    ...retry(failure),
  });
}

const retry = (failure: UpstreamFailure) => (failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {});
const tokensOf = (usage: Usage | undefined) => (usage ? { inputTokens: usage.input, outputTokens: usage.output } : undefined);
