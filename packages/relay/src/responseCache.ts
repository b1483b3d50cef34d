/**
 * @module responseCache
 * An LRU cache of successful non-streaming responses, keyed on the
 * canonical (RFC 8785) form of the request, so requests that differ only in
 * key order or spacing share an entry. Errors are never cached, and a
 * client can opt out per request.
 */
import { createHash } from 'node:crypto';
import { canonicalize } from '@switchyard/audit-chain';
import { LRUCache } from 'lru-cache';
import type { Usage } from './types.js';

/** A cached response. */
export interface CachedResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
  provider: string;
  usage: Usage | undefined;
}

/** `server.operations.cache`. */
export interface ResponseCacheSettings {
  /** Default true. */
  enabled?: boolean;
  /** Entries kept (default 1,000). */
  size?: number;
  /** Time to live (default 5 minutes). */
  ttlMs?: number;
}

/** Hit-rate statistics for the stats endpoints. */
export interface CacheStats {
  enabled: boolean;
  entries: number;
  hits: number;
  misses: number;
  hit_rate: number;
}

/**
 * The relay's response cache.
 *
 * @example
 * ```ts
 * const cache = new ResponseCache({ size: 500, ttlMs: 60_000 });
 * ```
 */
export class ResponseCache {
  private cache: LRUCache<string, CachedResponse>;
  private on: boolean;
  private hits = 0;
  private misses = 0;

  constructor(settings: ResponseCacheSettings = {}) {
    this.on = settings.enabled ?? true;
    this.cache = ResponseCache.create(settings);
  }

  private static create(settings: ResponseCacheSettings): LRUCache<string, CachedResponse> {
    return new LRUCache({ max: Math.max(1, settings.size ?? 1000), ttl: Math.max(1, settings.ttlMs ?? 5 * 60_000), ttlAutopurge: false });
  }

  /** Applies new settings; entries are dropped when the size or TTL changes. */
  configure(settings: ResponseCacheSettings): void {
    this.on = settings.enabled ?? true;
    if (this.cache.max !== (settings.size ?? 1000) || this.cache.ttl !== (settings.ttlMs ?? 5 * 60_000))
      this.cache = ResponseCache.create(settings);
  }

  /** Whether the cache serves and stores answers (`server.operations.cache.enabled`); when off, callers skip {@link key}. */
  get enabled(): boolean {
    return this.on;
  }

  /** The cache key of a request: its family and its canonical body. */
  key(ingress: string, body: Record<string, unknown>): string | undefined {
    try {
      return createHash('sha256').update(ingress).update('\n').update(canonicalize(body)).digest('base64url');
    } catch {
      return undefined; // a body JSON.parse produced is always canonicalizable; this guards odd numbers
    }
  }

  get(key: string): CachedResponse | undefined {
    if (!this.on) return undefined;
    const hit = this.cache.get(key);
    if (hit) this.hits++;
    else this.misses++;
    return hit;
  }

  /** Stores a response; only 2xx responses are accepted. */
  set(key: string, response: CachedResponse): void {
    if (!this.on || response.status < 200 || response.status >= 300) return;
    this.cache.set(key, response);
  }

  stats(): CacheStats {
    const lookups = this.hits + this.misses;
    return {
      enabled: this.on,
      entries: this.cache.size,
      hits: this.hits,
      misses: this.misses,
      hit_rate: lookups === 0 ? 0 : this.hits / lookups,
    };
  }
}
