/**
 * @module responseCache
 * An LRU cache of successful responses, keyed on the client's identity and
 * the canonical (RFC 8785) form of the request, so requests that differ only
 * in key order or spacing share an entry, and no client is ever answered
 * from another client's entry. A completion is a sample: by default only
 * deterministic (`temperature: 0`), non-streamed requests are cached, and the
 * cache itself is off unless configured. Errors are never cached, and a
 * client can opt out per request.
 */
import { createHash } from 'node:crypto';
import { canonicalize } from '@switchyard/audit-chain';
import { LRUCache } from 'lru-cache';
import type { ResponseSink } from './sink.js';
import type { RelayRequest, Usage } from './types.js';

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
  /** Default false: a cache is opt-in. */
  enabled?: boolean;
  /** Cache streamed answers too, replayed as one body (default false). */
  streaming?: boolean;
  /** Cache sampled requests too: those without `temperature: 0` (default false). */
  sampled?: boolean;
  /** Entries kept (default 1,000). */
  size?: number;
  /** Time to live (default 5 minutes). */
  ttlMs?: number;
}

/** Hit-rate statistics for the stats endpoints. */
export interface CacheStats {
  enabled: boolean;
  streaming: boolean;
  sampled: boolean;
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
  private streaming: boolean;
  private sampled: boolean;
  private hits = 0;
  private misses = 0;

  constructor(settings: ResponseCacheSettings = {}) {
    this.on = settings.enabled ?? false;
    this.streaming = settings.streaming ?? false;
    this.sampled = settings.sampled ?? false;
    this.cache = ResponseCache.create(settings);
  }

  private static create(settings: ResponseCacheSettings): LRUCache<string, CachedResponse> {
    return new LRUCache({ max: Math.max(1, settings.size ?? 1000), ttl: Math.max(1, settings.ttlMs ?? 5 * 60_000), ttlAutopurge: false });
  }

  /** Applies new settings; entries are dropped when the size or TTL changes. */
  configure(settings: ResponseCacheSettings): void {
    this.on = settings.enabled ?? false;
    this.streaming = settings.streaming ?? false;
    this.sampled = settings.sampled ?? false;
    if (this.cache.max !== (settings.size ?? 1000) || this.cache.ttl !== (settings.ttlMs ?? 5 * 60_000))
      this.cache = ResponseCache.create(settings);
  }

  /** Whether the cache serves and stores answers (`server.operations.cache.enabled`); when off, callers skip {@link key}. */
  get enabled(): boolean {
    return this.on;
  }

  /**
   * Whether `request` may be answered from, and stored in, the cache: the
   * cache is on, the request names its client (`cacheScope`), did not opt
   * out, and is of a kind the settings cache (streamed, sampled). Cheap: the
   * relay asks this before it computes any key.
   */
  admits(request: RelayRequest): boolean {
    if (!this.on || request.noCache || request.cacheScope === undefined) return false;
    if (request.stream && !this.streaming) return false;
    return this.sampled || !isSampled(request);
  }

  /** The cache key of a request: its client's scope, its family and its canonical body. */
  key(ingress: string, body: Record<string, unknown>, scope = ''): string | undefined {
    try {
      return createHash('sha256').update(scope).update('\n').update(ingress).update('\n').update(canonicalize(body)).digest('base64url');
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
      streaming: this.streaming,
      sampled: this.sampled,
      entries: this.cache.size,
      hits: this.hits,
      misses: this.misses,
      hit_rate: lookups === 0 ? 0 : this.hits / lookups,
    };
  }
}

/**
 * Whether a request samples its answer: anything but an explicit
 * `temperature: 0` (every family's providers default to a temperature above
 * 0). Gemini carries it in `generationConfig`.
 */
function isSampled(request: RelayRequest): boolean {
  const body = request.body;
  const config = body.generationConfig;
  const temperature =
    request.ingress === 'gemini' && typeof config === 'object' && config !== null
      ? (config as Record<string, unknown>).temperature
      : body.temperature;
  return temperature !== 0;
}

/** The most of a streamed answer recorded for the cache; a longer stream is passed on but not cached. */
const MAX_RECORDED_BYTES = 4 * 1024 * 1024;

/**
 * A sink that passes everything on to the client's sink and keeps a copy, so
 * a streamed answer can be cached (`cache.streaming`) and replayed as one body.
 */
export class RecordingSink implements ResponseSink {
  private status = 0;
  private headers: Record<string, string> = {};
  private chunks: Uint8Array[] = [];
  private bytes = 0;

  constructor(private readonly inner: ResponseSink) {}

  get headersSent(): boolean {
    return this.inner.headersSent;
  }

  get closed(): boolean {
    return this.inner.closed;
  }

  writeHead(status: number, headers: Record<string, string>): void {
    this.status = status;
    this.headers = { ...headers };
    this.inner.writeHead(status, headers);
  }

  write(chunk: Uint8Array | string): boolean {
    this.keep(chunk);
    return this.inner.write(chunk);
  }

  drain(): Promise<void> {
    return this.inner.drain();
  }

  end(chunk?: Uint8Array | string): void {
    if (chunk !== undefined) this.keep(chunk);
    this.inner.end(chunk);
  }

  /** What reached the client, when it all was kept. */
  recorded(): { status: number; headers: Record<string, string>; body: Uint8Array } | undefined {
    if (this.status === 0 || this.bytes > MAX_RECORDED_BYTES) return undefined;
    return { status: this.status, headers: this.headers, body: Buffer.concat(this.chunks) };
  }

  private keep(chunk: Uint8Array | string): void {
    if (this.bytes > MAX_RECORDED_BYTES) return;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.bytes += bytes.byteLength;
    if (this.bytes > MAX_RECORDED_BYTES) this.chunks = [];
    else this.chunks.push(Buffer.from(bytes));
  }
}
