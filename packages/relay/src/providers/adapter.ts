/**
 * @module adapter
 * A provider adapter knows one provider kind: where its API lives, how it
 * authenticates, what it calls its models, and what its errors mean. The
 * relay does the rest (routing, retries, streaming) the same for every kind.
 */
import type { ByteStreamDecoder, ChatRequest, EncodeRequestOptions } from '@switchyard/translate';
import type { Json } from '@switchyard/translate/wire';
import type { BufferLimits } from '../bufferedDispatch.js';
import type { ApiFamily, ProviderConfig, RelayCredential, UpstreamFailure, UpstreamRequest, UpstreamResponse, Usage } from '../types.js';

/** Sends upstream requests: undici for real providers, in-process for the mock. */
export interface Transport {
  /**
   * Sends `request`. With `buffer`, the caller will read the whole answer anyway (a non-streamed
   * completion, an error body): a transport may read it before resolving and hand it over as
   * `bytes`, within the limits given, which spares a stream per response. A transport that
   * ignores `buffer` answers with a stream, as without it.
   */
  send(request: UpstreamRequest, options: SendOptions): Promise<UpstreamResponse>;
}

/** Options of {@link Transport.send}. */
export interface SendOptions {
  /** Cancels the call when it aborts (the client went away). */
  signal?: AbortSignal;
  /** Read the whole answer before resolving, within these limits (see {@link BufferLimits}). */
  buffer?: BufferLimits;
}

/** What the relay asks an adapter to build. */
export interface BuildInput {
  /** The client's body, in the adapter's family. */
  body: Record<string, unknown>;
  /** The client's body bytes, reused when no field needs rewriting. */
  rawBody: Uint8Array;
  /** The model name to send upstream (after aliases). */
  upstreamModel: string;
  stream: boolean;
  /** Client headers worth forwarding. */
  headers?: Record<string, string>;
}

/**
 * The wire format of a provider that speaks none of the four API families:
 * every request is translated to it, and its answers (always a stream) are
 * translated back.
 */
export interface WireCodec {
  /** The provider's request body for a neutral request; throws `TranslationError` for what it cannot express. */
  encodeRequest(
    request: ChatRequest,
    context: { requestId: string; provider: ProviderConfig; credential: RelayCredential | undefined },
  ): Json;
  /** A decoder of the provider's answer stream into neutral events. */
  streamDecoder(): ByteStreamDecoder;
}

/** A provider kind. */
export interface ProviderAdapter {
  readonly kind: string;
  /** The wire format the provider speaks: one of the API families, or `custom` with a {@link WireCodec}. */
  readonly family: ApiFamily | 'custom';
  /** The provider's own wire format, when `family` is `custom`. */
  readonly wire?: WireCodec;
  /** False for providers that need no credential (the mock). */
  readonly requiresCredential: boolean;
  /** An in-process transport, used instead of HTTP when present. */
  readonly transport?: Transport;
  /** The upstream request for one attempt. */
  buildRequest(provider: ProviderConfig, credential: RelayCredential | undefined, input: BuildInput): UpstreamRequest;
  /** A cheap request that tells whether the provider is up (health checks). */
  healthRequest(provider: ProviderConfig, credential: RelayCredential | undefined): UpstreamRequest;
  /** Classifies a non-2xx response. */
  classify(status: number, headers: Record<string, string>, body: Uint8Array, now: number): UpstreamFailure;
  /** Token usage from a complete JSON response, if reported. */
  usageFromResponse(json: unknown): Usage | undefined;
  /** Token usage from one streamed event's JSON data, if it carries it. */
  usageFromEvent(json: unknown): Usage | undefined;
  /** A request that counts the input tokens of `input.body` (a request in the adapter's family), if the provider can. */
  countTokensRequest?(provider: ProviderConfig, credential: RelayCredential | undefined, input: BuildInput): UpstreamRequest;
  /** The token count in the answer to {@link countTokensRequest}. */
  countFromResponse?(json: unknown): number | undefined;
  /** Settings for requests translated into this provider's family (a default `max_tokens`, say). */
  encodeOptions?(provider: ProviderConfig): EncodeRequestOptions;
}

/** Adapters by kind. */
export class AdapterRegistry {
  private readonly adapters = new Map<string, ProviderAdapter>();

  constructor(adapters: readonly ProviderAdapter[] = []) {
    for (const adapter of adapters) this.register(adapter);
  }

  register(adapter: ProviderAdapter): void {
    this.adapters.set(adapter.kind, adapter);
  }

  get(kind: string): ProviderAdapter | undefined {
    return this.adapters.get(kind);
  }

  kinds(): string[] {
    return [...this.adapters.keys()];
  }
}
