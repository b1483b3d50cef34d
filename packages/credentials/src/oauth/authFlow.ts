/**
 * @module authFlow
 * The plugin interface for sign-in and refresh flows. A flow knows how to
 * get a first token for a user (usually a device sign-in: show a code, wait
 * for the user) and how to refresh a credential it created. The manager
 * stores what the flow returns, encrypts its secrets at rest, refreshes on
 * schedule through it, and serves its sign-in at `/v0/oauth/{flow}`.
 *
 * The two presets ({@link codeAssistantFlow}, {@link cloudCodingAssistantFlow})
 * and the generic {@link deviceCodeFlow} implement it; so can any custom
 * provider. See `docs/credentials.md` ("Writing a custom flow").
 *
 * @example
 * ```ts
 * const myFlow: AuthFlow = {
 *   name: 'my-provider',
 *   provider: 'my-provider',
 *   async start(options, context) {
 *     const code = await requestMyDeviceCode(context.http);
 *     return {
 *       prompt: { user_code: code.user, verification_uri: code.url, verification_uri_complete: null,
 *                 expires_at: new Date(context.scheduler.now() + 600_000).toISOString(), interval_ms: 5000 },
 *       complete: (signal) => pollMyTokenEndpoint(code, context, signal),
 *     };
 *   },
 *   async refresh(credential, context) {
 *     return exchangeMyRefreshToken(credential.refresh_token!, context.http);
 *   },
 * };
 * const manager = new CredentialManager({ store, flows: [myFlow] });
 * ```
 */
import type { Scheduler } from '@switchyard/runtime';
import type { Credential } from '../credential.js';
import type { HttpClient } from './http.js';

/** What a flow gets from the manager. */
export interface AuthFlowContext {
  http: HttpClient;
  scheduler: Scheduler;
  /** Fires when the caller gives up (a cancelled sign-in, a closing manager). */
  signal?: AbortSignal;
}

/** What to show the user during a device sign-in (RFC 8628 §3.3). */
export interface DeviceCodePrompt {
  user_code: string;
  verification_uri: string;
  /** The URI with the code filled in, when the server offers one. */
  verification_uri_complete: string | null;
  /** When the code stops working (ISO 8601). */
  expires_at: string;
  /** How often the flow polls, in milliseconds. */
  interval_ms: number;
}

/** Tokens a flow obtained; the manager stores them as an `oauth` credential. */
export interface FlowTokens {
  token: string;
  refresh_token?: string;
  /** ISO 8601; omitted for tokens that do not expire. */
  expires_at?: string;
  /** Public values the flow needs later (a region, a client id, an API base URL). */
  params?: Record<string, string>;
  /** Secret values the flow needs later (a client secret); encrypted at rest. */
  secrets?: Record<string, string>;
}

/** Result of a completed sign-in. */
export interface SignedIn extends FlowTokens {
  /** Overrides the flow's provider for this credential. */
  provider?: string;
  /** A human label (the account name), shown in status records. */
  label?: string;
}

/** A sign-in waiting for the user. */
export interface PendingSignIn {
  prompt: DeviceCodePrompt;
  /** Polls until the user finishes; rejects with `access_denied`, `expired_token` or `aborted`. */
  complete(signal?: AbortSignal): Promise<SignedIn>;
}

/** A sign-in and refresh flow. */
export interface AuthFlow {
  /** Unique name: the `{flow}` of `/v0/oauth/{flow}` and `oauth.flow` of its credentials. */
  readonly name: string;
  /** The provider its credentials belong to, unless a sign-in says otherwise. */
  readonly provider: string;
  /**
   * Starts a sign-in. `options` come from the user (a form, a CLI flag);
   * the flow validates them and throws a `CredentialsError` naming the field.
   */
  start(options: Record<string, unknown>, context: AuthFlowContext): Promise<PendingSignIn>;
  /**
   * Gets a new token for a credential this flow created. Throws
   * `refresh_rejected` when the grant is gone for good (the user must sign in
   * again) and `refresh_failed` for anything worth retrying.
   */
  refresh(credential: Credential, context: AuthFlowContext): Promise<FlowTokens>;
}
