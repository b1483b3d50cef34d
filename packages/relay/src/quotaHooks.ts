/**
 * @module quotaHooks
 * Where the relay applies `quota-exceeded.*` (see {@link quotaPolicy} for
 * the policy itself): the points in a request at which quota changes what
 * happens next.
 *
 * - before picking a credential: with switch-project off, a provider whose
 *   last credential is out of quota ends the request with a 429;
 * - when a pool hands out nothing: if quota is why, the client hears about
 *   quota rather than a missing credential;
 * - when the upstream refuses a credential for quota: it is remembered, and
 *   with switch-project off the request stops there;
 * - when quota is about to end the request: the one preview-model retry;
 * - in cluster mode, before an attempt goes upstream: admission against the
 *   credential's shared quota, and letting the reservation go after.
 *
 * It owns the relay's {@link QuotaMemory}, which outlives requests; what one
 * request learnt goes into its {@link RequestState}.
 */
import { localQuotaFailure, previewModelFor, type QuotaExceededSettings, QuotaMemory } from './quotaPolicy.js';
import type { RelayContext, RelayCredentialPool } from './relayOptions.js';
import type { PinnedAttempt, RequestState } from './requestState.js';
import type { Route } from './routingTable.js';
import type { ResponseSink } from './sink.js';
import type { RelayCredential, RelayRequest } from './types.js';

/** The most tokens a request's body alone makes admission hold (see {@link QuotaHooks.admit}). */
const MAX_BODY_ESTIMATE = 32_768;

/** The relay's quota decision points; one per relay. */
export class QuotaHooks {
  private readonly memory = new QuotaMemory();

  constructor(private readonly ctx: RelayContext) {}

  /** Read at each decision: `Relay.configure` may change them between two attempts of one request. */
  private get settings(): Required<QuotaExceededSettings> {
    const q = this.ctx.options.quotaExceeded;
    return { switchCredential: q?.switchCredential ?? true, switchPreviewModel: q?.switchPreviewModel ?? true };
  }

  /**
   * Cluster mode: admission against the credential's quota shared by every
   * node, before the attempt goes upstream. Undefined when the pool holds
   * nothing for it (so the relay awaits only in cluster mode). Resolves to
   * the attempt's reservation, or `undefined` when refused: the credential
   * is then left for this request, and quota is what the client hears if
   * nothing else serves it.
   */
  admit(
    provider: string,
    credential: RelayCredential,
    request: RelayRequest,
    state: RequestState,
  ): Promise<{ reservation?: string } | undefined> | undefined {
    const pool = this.ctx.options.credentials?.pool(provider);
    // A guess at what the request will use: its body at about four bytes a token (JSON framing makes it generous),
    // capped so that a large inline image or file does not hold a credential's whole quota while it runs.
    const pending = pool?.admit?.(credential.id, Math.min(Math.ceil(request.rawBody.length / 4), MAX_BODY_ESTIMATE));
    if (!pending) return undefined;
    return pending.then((answer) => {
      if (answer.admitted) return answer;
      let tried = state.triedCredentials.get(provider);
      if (!tried) state.triedCredentials.set(provider, (tried = new Set()));
      tried.add(credential.id);
      const now = this.ctx.clock.now();
      // Room held by requests in flight comes back as they finish; use that reached the limit, at the reset.
      const back = answer.used < answer.limit ? new Date(now + 1000).toISOString() : pool?.statusOf?.(credential.id)?.quota?.resets_at;
      state.lastFailure = localQuotaFailure(
        provider,
        `credential ${credential.id} has no room in its shared quota (${answer.used} used and ${answer.reserved} held by requests in flight, of ${answer.limit})`,
        [back],
        now,
      );
      return undefined;
    });
  }

  /** Lets go of an attempt's reservation (idempotent: nothing happens once its usage settled it). */
  release(provider: string, credential: RelayCredential | undefined, reservation: string | undefined): void {
    if (reservation === undefined || !credential) return;
    this.ctx.options.credentials?.pool(provider)?.release?.(credential.id, reservation);
  }

  /** A credential was handed to an attempt. */
  served(provider: string, credentialId: string): void {
    this.memory.served(provider, credentialId);
  }

  /**
   * switch-project off: a provider stays on the credential it served last;
   * once that one is out of quota, the request ends with a 429 instead of
   * moving to another credential.
   */
  stuckOnExhausted(provider: string, pool: RelayCredentialPool, state: RequestState): boolean {
    if (this.settings.switchCredential || !pool.statusOf) return false;
    const current = this.memory.current(provider);
    const view = current === undefined ? undefined : pool.statusOf(current);
    if (!view || !this.memory.isOut(provider, view)) return false;
    state.quota = { provider };
    state.lastFailure = localQuotaFailure(
      provider,
      `credential ${current} has no quota left, and quota-exceeded.switch-project is off`,
      [view.quota?.resets_at],
      this.ctx.clock.now(),
    );
    state.quotaStop = true;
    return true;
  }

  /** When a pool handed out nothing because its credentials are out of quota, the client hears about quota (429), not a missing credential. */
  noteLocalExhaustion(provider: string, pool: RelayCredentialPool, state: RequestState): void {
    const out = this.memory.allOut(provider, pool.status?.());
    if (!out) return;
    state.quota ??= { provider };
    state.lastFailure ??= localQuotaFailure(
      provider,
      `every credential is out of quota (${out.map((r) => r.id).join(', ')})`,
      out.map((r) => r.quota?.resets_at),
      this.ctx.clock.now(),
    );
  }

  /** The upstream refused a credential for quota: remember it, and with switch-project off stop the request here. */
  refused(provider: string, credential: RelayCredential | undefined, state: RequestState): void {
    state.quota = { provider, credential };
    if (credential) this.memory.refusedForQuota(provider, credential.id);
    // switch-project off: the 429 goes back rather than trying another credential.
    if (!this.settings.switchCredential) state.quotaStop = true;
  }

  /**
   * The one retry with a preview model, when quota is what ends the request
   * and nothing has reached the client: the same provider, on a credential
   * the upstream refused for quota (quotas are often per model upstream);
   * never on one the pool's own token count says is used up.
   */
  previewRetry(request: RelayRequest, route: Route, state: RequestState, sink: ResponseSink): PinnedAttempt | undefined {
    const hit = state.quota;
    if (!hit || state.previewTried || !this.settings.switchPreviewModel || sink.headersSent || sink.closed) return undefined;
    if (state.lastFailure && state.lastFailure.kind !== 'quota_exceeded') return undefined;
    const config = this.ctx.table.provider(hit.provider);
    const model = previewModelFor(config?.previewModels, [request.model, route.upstreamModel.get(hit.provider) ?? request.model]);
    if (!config || !model) return undefined;
    let credential = hit.credential;
    const pool = this.ctx.options.credentials?.pool(hit.provider);
    if (!credential && pool) {
      const id = this.memory.previewCandidate(hit.provider, pool.status?.());
      credential = id === undefined ? undefined : pool.peekById?.(id);
      if (!credential) return undefined;
    }
    state.previewTried = true;
    return { provider: hit.provider, credential, upstreamModel: config.aliases?.[model] ?? model, preview: true };
  }
}
