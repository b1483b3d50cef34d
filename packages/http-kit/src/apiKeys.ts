/**
 * @module apiKeys
 * The client API keys of `/v1/*` (`api-keys` in the config). A presented
 * key is hashed (SHA-256) and its digest looked up among the configured
 * keys' digests: what the lookup's timing could tell about is a digest,
 * never the key or a prefix of it, and it does not depend on which key
 * matched (runtime client keys are found the same way, in clientKeyGuard).
 */
import { hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * A client key's SHA-256 as 64 hex characters: how configured keys are found here and runtime client keys
 * are stored and found (server-http's client keys). One-shot `hash` rather than `createHash` (a Hash object
 * costs several microseconds), and hex rather than a Buffer: on Node 20 `hash(…, 'buffer')` took 3.1 µs
 * against 0.8 µs for hex (2026-11-28), and this runs on every request.
 */
export function keyDigest(key: string): string {
  return hash('sha256', key, 'hex');
}

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
  /** Each configured key's identity by the key's digest (the first entry of a key listed twice). */
  private readonly byDigest = new Map<string, KeyIdentity>();
  private readonly identities: KeyIdentity[];

  constructor(keys: readonly ClientKeyEntry[]) {
    const entries = keys.map((entry) => (typeof entry === 'string' ? { key: entry } : entry)).filter((entry) => entry.key.length > 0);
    // A key without a name is known by its position, never by any part of the key itself.
    this.identities = entries.map((entry, index) => ({
      name: entry.name ?? `key-${index + 1}`,
      admin: entry.admin === true,
      tenant: entry.tenant ?? 'default',
    }));
    entries.forEach((entry, index) => {
      const digest = keyDigest(entry.key);
      if (!this.byDigest.has(digest)) this.byDigest.set(digest, this.identities[index]!);
    });
  }

  /** Who holds `key`, or undefined when it is not a configured key (also when none is configured). */
  identify(key: string | undefined): KeyIdentity | undefined {
    if (key === undefined || key.length === 0 || this.byDigest.size === 0) return undefined;
    return this.byDigest.get(keyDigest(key));
  }

  /** The names of the keys marked `admin` (a server serving a workflow makes them its governance admins). */
  get adminNames(): string[] {
    return this.identities.filter((identity) => identity.admin).map((identity) => identity.name);
  }

  /** True when no key is configured: `/v1/*` is open. */
  get open(): boolean {
    return this.byDigest.size === 0;
  }

  /** Whether `key` is one of the configured keys. */
  accepts(key: string | undefined): boolean {
    if (this.open) return true;
    return this.identify(key) !== undefined;
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
