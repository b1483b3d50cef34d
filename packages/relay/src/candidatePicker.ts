/**
 * @module candidatePicker
 * Chooses the provider and credential of a request's next attempt. The
 * candidates are the providers serving the model that the routing table has
 * not held out (cooling down, unhealthy) and this request has not used up;
 * the provider strategy picks one (a `decision` event tells which), and the
 * provider's credential pool hands out a credential it has not tried yet.
 *
 * A provider that cannot be used (unknown kind, no credentials, quota gone)
 * is marked used up in the request's state and picking goes round again;
 * when nothing is left, the outcome is the failure the client gets. When
 * every candidate has failed once, those that failed with a server error get
 * a second round.
 */
import { NoProviderAvailable } from '@switchyard/core-routing';
import type { RelayFailure } from './errors.js';
import { selectionFailure } from './outcome.js';
import type { QuotaHooks } from './quotaHooks.js';
import type { RelayContext, RelayCredentialPool } from './relayOptions.js';
import type { RequestState } from './requestState.js';
import type { Route } from './routingTable.js';
import type { RelayCredential, RelayRequest } from './types.js';

/** What picking came to: a provider (and credential) to try, another round, or the failure that ends the request. */
export type PickOutcome =
  | { provider: string; credential: RelayCredential | undefined; retry?: false }
  | { retry: true }
  | { failure: RelayFailure };

/** Picks candidates for a relay's requests; one per relay. */
export class CandidatePicker {
  constructor(
    private readonly ctx: RelayContext,
    private readonly quota: QuotaHooks,
  ) {}

  /** Chooses a provider and a credential for the next attempt. */
  pick(route: Route, state: RequestState, request: RelayRequest): PickOutcome {
    const { ctx } = this;
    let provider: string;
    try {
      provider = route.selector.select(state.exhausted.size > 0 ? { exclude: state.exhausted } : undefined);
    } catch (error) {
      if (error instanceof NoProviderAvailable && state.serverFailed.size > 0) {
        // Every candidate failed once: give the ones that failed with a server error a second try.
        for (const name of state.serverFailed) state.exhausted.delete(name);
        state.serverFailed.clear();
        return { retry: true };
      }
      return { failure: selectionFailure(error, state, ctx.clock.now()) };
    }
    // Events with no listener are not built: this runs for every attempt.
    if (ctx.events.listenerCount('decision') > 0)
      ctx.events.emit('decision', {
        requestId: request.requestId,
        model: request.model,
        provider,
        strategy: route.selector.strategy,
        candidates: route.targets.map((t) => t.provider),
        at: ctx.clock.now(),
      });
    const config = ctx.table.servingProvider(provider);
    if (!config) {
      // Removed or disabled by a reload since this request's route was taken: no longer a candidate.
      state.exhausted.add(provider);
      return { retry: true };
    }
    const adapter = ctx.adapters.get(config.kind);
    const pool = ctx.options.credentials?.pool(provider);
    if (pool && this.quota.stuckOnExhausted(provider, pool, state)) return { retry: true };
    if (!adapter) {
      state.exhausted.add(provider);
      state.lastFailure = { kind: 'server', status: null, message: `provider ${provider} has unknown kind ${JSON.stringify(config.kind)}` };
      return { retry: true };
    }
    if (!pool) {
      if (!adapter.requiresCredential) return { provider, credential: undefined };
      state.exhausted.add(provider);
      state.noCredentials.add(provider);
      return { retry: true };
    }
    try {
      const tried = state.triedCredentials.get(provider);
      return { provider, credential: pool.acquire(tried ? { exclude: tried } : undefined) };
    } catch {
      state.exhausted.add(provider);
      state.noCredentials.add(provider);
      this.quota.noteLocalExhaustion(provider, pool, state);
      this.noteCredentialCooldowns(provider, pool, state);
      this.noteProviderWideLimit(provider, pool);
      return { retry: true };
    }
  }

  /**
   * When a pool handed out nothing because every credential is cooling down
   * after rate limits, the client hears a rate limit (429, `Retry-After` until
   * the first one returns), not 503 `no_credentials`, which reads as a
   * misconfigured gateway and tells a client nothing about when to come back.
   */
  private noteCredentialCooldowns(provider: string, pool: RelayCredentialPool, state: RequestState): void {
    if (state.lastFailure) return;
    const first = firstCredentialReturn(pool);
    if (first === undefined) return;
    state.lastFailure = {
      kind: 'rate_limit',
      status: null,
      message: `every credential of ${provider} is cooling down after rate limits; the first returns at ${new Date(first).toISOString()}`,
      retryAfterMs: Math.max(0, first - this.ctx.clock.now()),
    };
  }

  /**
   * When no credential of a provider is usable at all, the provider itself is rate limited. When that
   * starts a cooldown while every credential is cooling with a known return, the cooldown ends when the
   * first one returns: a burst of requests finding them all out (each a rate limit counted) would
   * otherwise hold the provider out, and tell clients to come back, only after the provider's whole
   * rate-limit duration (5 minutes by default), long after its credentials were back.
   */
  private noteProviderWideLimit(provider: string, pool: RelayCredentialPool): void {
    const cooldowns = this.ctx.options.cooldowns;
    if (!noCredentialLeft(pool) || !cooldowns) return;
    const first = firstCredentialReturn(pool);
    // The cap goes with the failure, so a cooldown it starts is written once: a start and then a cut
    // would be two writes to a shared store, and a node applying its own first one back after the
    // second could then hold, and recover, the wrong period.
    cooldowns.recordFailure(provider, first === undefined ? { kind: 'rate_limit' } : { kind: 'rate_limit', endsBy: first });
  }
}

/** Whether the pool has no credential to hand out. */
function noCredentialLeft(pool: RelayCredentialPool): boolean {
  if (pool.peek) return pool.peek() === undefined;
  try {
    pool.acquire(); // a pool without peek: the check costs it one counted pick
    return false;
  } catch {
    return true;
  }
}

/** When the first credential of a pool returns, if none is available and some are cooling down with a known end. */
function firstCredentialReturn(pool: RelayCredentialPool): number | undefined {
  if (!pool.status) return undefined;
  const records = pool.status();
  if (records.length === 0 || records.some((r) => r.available)) return undefined;
  const returns = records.map((r) => (r.cooldown_until ? Date.parse(r.cooldown_until) : Number.NaN)).filter(Number.isFinite);
  return returns.length === 0 ? undefined : Math.min(...returns);
}
