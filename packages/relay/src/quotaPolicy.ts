/**
 * @module quotaPolicy
 * What the relay does when a credential runs out of quota
 * (`quota-exceeded.*` in the gateway config):
 *
 * - `switchCredential` (default true): a credential whose quota is gone
 *   (the upstream's quota-type 429, or the pool's own tracker) is rotated
 *   away from, to the provider's other credentials and then the other
 *   providers. Off, the request ends with the 429 instead, and a provider
 *   stays on the credential it last served until that one's quota resets.
 * - `switchPreviewModel` (default true): when a request is about to fail
 *   because the upstream said a credential's quota is gone, it is tried once
 *   more, before the first byte, with the first of the provider's
 *   `previewModels`, on the same credential (quotas are often per model
 *   upstream). The pool's own tracker counts tokens per credential, whatever
 *   the model, so a credential it counts out gets no preview retry.
 *
 * The decisions live here; the relay calls them at its decision points.
 */
import type { RelayCredential, UpstreamFailure } from './types.js';

/** `quota-exceeded.*`: what to do when a credential's quota is gone. */
export interface QuotaExceededSettings {
  /** Rotate to another credential (default true); off, return the 429. */
  switchCredential?: boolean;
  /** Retry once with the provider's first preview model when quota ends a request (default true). */
  switchPreviewModel?: boolean;
}

/** What a pool tells about one credential (`CredentialPool.statusOf` and `status` fit). */
export interface CredentialQuotaView {
  id: string;
  status: string;
  available: boolean;
  quota?: { remaining: number | null; resets_at: string | null };
  /** When a credential cooling down after a rate limit returns (ISO 8601), if it is. */
  cooldown_until?: string | null;
}

/** The quota that ended (or would end) a request: which provider, and the credential the upstream refused. */
export interface QuotaHit {
  provider: string;
  /** The credential the upstream refused for quota; absent when the pool already held every credential out. */
  credential?: RelayCredential | undefined;
}

/** A quota failure found locally, with `Retry-After` until the earliest reset when one is known. */
export function localQuotaFailure(
  provider: string,
  detail: string,
  resetsAt: readonly (string | null | undefined)[],
  now: number,
): UpstreamFailure {
  const times = resetsAt.map((t) => (t ? Date.parse(t) : Number.NaN)).filter((t) => Number.isFinite(t));
  const earliest = times.length > 0 ? Math.min(...times) : undefined;
  return {
    kind: 'quota_exceeded',
    status: 429,
    message: `provider ${provider}: ${detail}`,
    ...(earliest !== undefined ? { retryAfterMs: Math.max(0, earliest - now) } : {}),
  };
}

/** The preview model to retry with: the first of the provider's `previewModels` that is not the model already asked for. */
export function previewModelFor(previewModels: readonly string[] | undefined, requested: readonly string[]): string | undefined {
  return previewModels?.find((model) => !requested.includes(model));
}

/**
 * What the relay remembers about quota across requests: the credential each
 * provider served last, and the credentials the upstream refused for quota
 * (a pool holds those out, by an exhausted status or a cooldown, without
 * saying why). Both are bounded by the number of credentials.
 */
export class QuotaMemory {
  private readonly lastServed = new Map<string, string>();
  private readonly refused = new Map<string, Set<string>>();

  /** A credential was handed to an attempt. */
  served(provider: string, credentialId: string): void {
    this.lastServed.set(provider, credentialId);
  }

  /** The credential a provider served last. */
  current(provider: string): string | undefined {
    return this.lastServed.get(provider);
  }

  /** The upstream said a credential's quota is gone. */
  refusedForQuota(provider: string, credentialId: string): void {
    let ids = this.refused.get(provider);
    if (!ids) this.refused.set(provider, (ids = new Set()));
    ids.add(credentialId);
  }

  /** Whether a credential is held out for quota: the pool's tracker counts it exhausted, or the upstream refused it and the pool still holds it out. */
  isOut(provider: string, view: CredentialQuotaView): boolean {
    if (view.status === 'exhausted') return true;
    const ids = this.refused.get(provider);
    if (!ids?.has(view.id)) return false;
    if (!view.available) return true;
    ids.delete(view.id); // the pool let it back (its quota reset or its cooldown ended)
    return false;
  }

  /** When nothing of a provider is available and quota is why: the credentials out of quota; else undefined. */
  allOut(provider: string, records: readonly CredentialQuotaView[] | undefined): CredentialQuotaView[] | undefined {
    if (!records || records.length === 0 || records.some((r) => r.available)) return undefined;
    const out = records.filter((r) => this.isOut(provider, r));
    return out.length > 0 ? out : undefined;
  }

  /**
   * A credential the upstream refused for quota whose own token count still
   * has room: worth a preview-model retry (quotas are often per model
   * upstream, while the pool's tracker counts tokens whatever the model).
   */
  previewCandidate(provider: string, records: readonly CredentialQuotaView[] | undefined): string | undefined {
    const ids = this.refused.get(provider);
    if (!ids || !records) return undefined;
    const roomy = records.filter((r) => ids.has(r.id) && !r.available && (r.quota?.remaining ?? null) !== 0);
    const current = this.lastServed.get(provider);
    return (roomy.find((r) => r.id === current) ?? roomy[0])?.id;
  }
}
