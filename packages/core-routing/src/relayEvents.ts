/**
 * @module events
 * The relay's typed events. Metrics, logs, traces and dashboards subscribe
 * to these; the relay never calls them directly.
 */

/**
 * How a request or an attempt ended: `success`, `error` (the upstream's or the gateway's failure,
 * or the request's own fault), or `client_closed` (the client went away first: nobody's error,
 * like Nginx's 499).
 */
export type RelayOutcome = 'success' | 'error' | 'client_closed';

/**
 * Who sent a request: the client key it presented, by identity, never by secret. `keyId` is
 * stable for the key's life (`static:<name>` for a key from the config's `api-keys`); `tenant`
 * groups keys for usage and limits (`default` when the key names none).
 */
export interface ClientIdentity {
  keyId: string;
  name: string;
  tenant: string;
}

/** A request arrived. */
export interface RequestStartEvent {
  requestId: string;
  model: string;
  ingress: string;
  stream: boolean;
  /** The client key's identity, or null when `/v1` is open (no key configured). */
  client: ClientIdentity | null;
  at: number;
}

/** A request finished (answered, failed, or cut off). */
export interface RequestEndEvent {
  requestId: string;
  model: string;
  /** The client key's identity, or null when `/v1` is open (no key configured). */
  client: ClientIdentity | null;
  /** The provider of the last attempt, or null when none was tried. */
  provider: string | null;
  credentialId: string | null;
  outcome: RelayOutcome;
  /**
   * The status the client got (200 for a stream that broke after its first byte; 499 when the
   * client closed the request before it).
   */
  httpStatus: number;
  errorType: string | null;
  latencyMs: number;
  /** Time to the first byte sent to the client. */
  ttfbMs: number | null;
  tokens: { input: number; output: number };
  cached: boolean;
  attempts: number;
  at: number;
}

/** One try against one provider finished. */
export interface AttemptEndEvent {
  requestId: string;
  provider: string;
  credentialId: string | null;
  attempt: number;
  outcome: RelayOutcome;
  httpStatus: number | null;
  errorType: string | null;
  latencyMs: number;
  at: number;
}

/** The strategy chose a provider. */
export interface DecisionEvent {
  requestId: string;
  model: string;
  provider: string;
  strategy: string;
  candidates: string[];
  at: number;
}

/** Event map of the relay's emitter. */
export interface RelayEvents {
  'request:start': (event: RequestStartEvent) => void;
  'request:end': (event: RequestEndEvent) => void;
  'attempt:end': (event: AttemptEndEvent) => void;
  decision: (event: DecisionEvent) => void;
}
