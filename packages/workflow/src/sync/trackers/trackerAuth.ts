/**
 * @module trackerAuth
 * How a tracker adapter connects: its credential, its guarded dispatcher
 * and its state mapping ({@link TrackerConnection}, the base of the Linear
 * and Plane adapters). The default credential is OAuth 2.0, as
 * the specification asks: the client-credentials grant (Linear's app-actor
 * tokens, Plane's bot tokens for an app installation), fetched and
 * refreshed by {@link OAuthTokenSource}. An access token obtained
 * elsewhere, or the tracker's own API key, also work.
 */
import type { Dispatcher } from 'undici';
import type { FeatureState } from '../../domain/model.js';
import type { Clock } from '../../util/clock.js';
import { type OAuthClientCredentials, OAuthTokenSource } from '../http.js';
import { checkedBaseUrl, guardedDispatcher, type OutboundPolicy } from '../outbound.js';
import { StateMapping } from '../stateMapping.js';

/** A tracker credential. */
export type TrackerAuth =
  /** OAuth 2.0 client credentials (RFC 6749 §4.4): the token is fetched, cached and refreshed on a 401. */
  | ({ type: 'oauth_client_credentials' } & OAuthClientCredentials)
  /** An OAuth 2.0 access token obtained elsewhere (sent as a bearer token). */
  | { type: 'access_token'; token: string }
  /** The tracker's API key (Linear: a personal API key; Plane: `X-API-Key`). */
  | { type: 'api_key'; apiKey: string };

/** The credential of one call, and whether it is a bearer token or an API key. */
export interface TrackerCredential {
  kind: 'bearer' | 'api_key';
  value: string;
}

/** Hands out the current credential; `refresh` asks the token endpoint again (only OAuth client credentials can). */
export interface TrackerTokens {
  credential(refresh?: boolean): Promise<TrackerCredential>;
  readonly refreshable: boolean;
}

/**
 * The credential source for a {@link TrackerAuth}; token endpoint calls go through `dispatcher`.
 *
 * @example
 * ```ts
 * const tokens = trackerTokenSource({ type: 'api_key', apiKey: key });
 * ```
 */
export function trackerTokenSource(auth: TrackerAuth, policy: OutboundPolicy = {}, clock?: Clock, dispatcher?: Dispatcher): TrackerTokens {
  if (auth.type === 'oauth_client_credentials') {
    checkedBaseUrl('auth.tokenUrl', auth.tokenUrl, policy);
    const { type: _type, ...credentials } = auth;
    const source = new OAuthTokenSource(credentials, clock, dispatcher);
    return { refreshable: true, credential: async (refresh = false) => ({ kind: 'bearer', value: await source.token(refresh) }) };
  }
  const credential: TrackerCredential =
    auth.type === 'access_token' ? { kind: 'bearer', value: auth.token } : { kind: 'api_key', value: auth.apiKey };
  return { refreshable: false, credential: async () => credential };
}

/** What every tracker adapter is configured with. */
export interface TrackerConnectionOptions extends OutboundPolicy {
  auth: TrackerAuth;
  /** Feature state → the tracker's state name; missing entries use the default mapping. */
  stateMapping?: Partial<Record<FeatureState, string>>;
  clock?: Clock;
}

/** The credential, the SSRF-guarded dispatcher and the state mapping a tracker adapter works with. */
export abstract class TrackerConnection {
  protected readonly mapping: StateMapping;
  protected readonly dispatcher: Dispatcher;
  protected readonly tokens: TrackerTokens;

  constructor(options: TrackerConnectionOptions) {
    this.mapping = new StateMapping(options.stateMapping);
    this.dispatcher = guardedDispatcher(options);
    this.tokens = trackerTokenSource(options.auth, options, options.clock, this.dispatcher);
  }

  mapState(state: FeatureState): string {
    return this.mapping.map(state);
  }

  unmapState(remote: string): FeatureState | undefined {
    return this.mapping.unmap(remote);
  }
}
