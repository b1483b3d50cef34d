/**
 * @module apiKeys
 * The client API keys of `/v1/*` (`api-keys` in the config). Keys are
 * compared as SHA-256 digests with `timingSafeEqual`, against every
 * configured key, so neither the length nor the prefix of a key leaks
 * through response timing.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

// One-shot `hash` rather than `createHash`: this runs on every request, and a Hash object costs several microseconds.
const digest = (key: string) => hash('sha256', key, 'buffer');

/**
 * A client key with the identity it carries: `name` is recorded as the actor; `admin` may run
 * admin-only operations; `tenant` groups keys for usage and limits (`default` when not given).
 */
export interface ClientKey {
  key: string;
  name?: string;
  admin?: boolean;
  tenant?: string | undefined;
}

/** A configured key: the key alone (as `api-keys` always took), or the key with its identity. */
export type ClientKeyEntry = string | ClientKey;

/** Who presented a key. */
export interface KeyIdentity {
  name: string;
  admin: boolean;
  tenant: string;
}

/** A set of accepted client keys. */
export class ApiKeySet {
  private digests: Buffer[];
  private identities: KeyIdentity[];

  constructor(keys: readonly ClientKeyEntry[]) {
    const entries = keys.map((entry) => (typeof entry === 'string' ? { key: entry } : entry)).filter((entry) => entry.key.length > 0);
    this.digests = entries.map((entry) => digest(entry.key));
    // A key without a name is known by its position, never by any part of the key itself.
    this.identities = entries.map((entry, index) => ({
      name: entry.name ?? `key-${index + 1}`,
      admin: entry.admin === true,
      tenant: entry.tenant ?? 'default',
    }));
  }

  /**
   * Who holds `key`, or undefined when it is not a configured key (also when none is configured).
   * Every key is compared, whichever matches.
   */
  identify(key: string | undefined): KeyIdentity | undefined {
    if (key === undefined || key.length === 0 || this.digests.length === 0) return undefined;
    const candidate = digest(key);
    let found: KeyIdentity | undefined;
    for (let i = 0; i < this.digests.length; i++) if (timingSafeEqual(candidate, this.digests[i]!) && !found) found = this.identities[i];
    return found;
  }

  /** The names of the keys marked `admin` (a server serving a workflow makes them its governance admins). */
  get adminNames(): string[] {
    return this.identities.filter((identity) => identity.admin).map((identity) => identity.name);
  }

  /** True when no key is configured: `/v1/*` is open. */
  get open(): boolean {
    return this.digests.length === 0;
  }

  /** Whether `key` is one of the configured keys. */
  accepts(key: string | undefined): boolean {
    if (this.open) return true;
    if (key === undefined || key.length === 0) return false;
    const candidate = digest(key);
    let match = false;
    // No early exit: the time taken does not depend on which key matched.
    for (const known of this.digests) match = timingSafeEqual(candidate, known) || match;
    return match;
  }
}

/**
 * The key a client presented: `Authorization: Bearer <key>` (OpenAI), or
 * `x-api-key` (Anthropic) or `x-goog-api-key` (Gemini).
 */
export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const authorization = headers.authorization;
  if (authorization?.toLowerCase().startsWith('bearer ')) return authorization.slice(7).trim();
  const apiKey = headers['x-api-key'] ?? headers['x-goog-api-key'];
  return typeof apiKey === 'string' ? apiKey.trim() : undefined;
}
