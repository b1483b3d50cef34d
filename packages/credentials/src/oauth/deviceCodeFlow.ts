/**
 * @module deviceCodeFlow
 * A complete {@link AuthFlow} for any standard server: sign-in by the RFC
 * 8628 device flow, refresh by refresh token (RFC 6749 §6), both
 * form-encoded. It is also the simplest example of a custom flow.
 */

import type { Scheduler } from '@switchyard/runtime';
import { CredentialsError } from '../errors.js';
import type { AuthFlow, AuthFlowContext, FlowTokens, PendingSignIn } from './authFlow.js';
import { ErrorAnswer, expiryFrom, serverText, startFormDeviceSignIn, TokenAnswer } from './deviceFlow.js';
import { describeUrl, formBody, type HttpClient, jsonOf, parseAnswer, send } from './http.js';

/**
 * Refreshes with a refresh token (RFC 6749 §6), form-encoded. `invalid_grant`
 * (and other client errors) mean the grant is gone: `refresh_rejected`;
 * transport failures and 5xx: `refresh_failed`, worth retrying.
 */
export async function refreshWithToken(
  context: AuthFlowContext,
  options: {
    tokenUrl: string;
    clientId: string;
    refreshToken: string;
    clientSecret?: string;
    scope?: string;
    headers?: Record<string, string>;
  },
): Promise<FlowTokens> {
  const response = await send(
    context.http,
    {
      method: 'POST',
      url: options.tokenUrl,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...options.headers },
      body: formBody({
        grant_type: 'refresh_token',
        refresh_token: options.refreshToken,
        client_id: options.clientId,
        client_secret: options.clientSecret,
        scope: options.scope,
      }),
      ...(context.signal ? { signal: context.signal } : {}),
    },
    'refresh_failed',
  );
  return tokensOfRefreshAnswer(context.scheduler, response, options.tokenUrl, options.refreshToken);
}

/** Reads a refresh answer: tokens, or the right error for the status. */
export function tokensOfRefreshAnswer(
  scheduler: Scheduler,
  response: Awaited<ReturnType<HttpClient>>,
  url: string,
  previousRefreshToken: string,
): FlowTokens {
  if (response.status >= 500 || response.status === 429) {
    throw new CredentialsError('refresh_failed', `${describeUrl(url)} answered HTTP ${response.status}`);
  }
  if (response.status !== 200) {
    const error = ErrorAnswer.safeParse(jsonOf(response));
    const reason = error.success ? serverText(error.data.error) : `HTTP ${response.status}`;
    throw new CredentialsError('refresh_rejected', `${describeUrl(url)} rejected the refresh (${reason}); sign in again`);
  }
  const answer = parseAnswer(TokenAnswer, response, 'token refresh', 'refresh_failed');
  const expires = expiryFrom(scheduler, answer.expires_in);
  // Servers that do not rotate refresh tokens leave them out: keep the one we have.
  return {
    token: answer.access_token,
    refresh_token: answer.refresh_token ?? previousRefreshToken,
    ...(expires ? { expires_at: expires } : {}),
  };
}

/** Options of {@link deviceCodeFlow}. */
export interface DeviceCodeFlowOptions {
  name: string;
  provider: string;
  deviceAuthorizationUrl: string;
  tokenUrl: string;
  clientId: string;
  /** For confidential clients; stored with the credential as an encrypted secret. */
  clientSecret?: string;
  scope?: string;
  headers?: Record<string, string>;
}

/**
 * A complete flow for any RFC 8628 server: device sign-in, then refresh
 * with the refresh token.
 *
 * @example
 * ```ts
 * const flow = deviceCodeFlow({
 *   name: 'acme', provider: 'acme', clientId: 'switchyard',
 *   deviceAuthorizationUrl: 'https://auth.acme.example/oauth/device/code',
 *   tokenUrl: 'https://auth.acme.example/oauth/token', scope: 'llm offline_access',
 * });
 * ```
 */
export function deviceCodeFlow(options: DeviceCodeFlowOptions): AuthFlow {
  return {
    name: options.name,
    provider: options.provider,
    async start(_input, context): Promise<PendingSignIn> {
      const signIn = await startFormDeviceSignIn(context, options);
      return {
        prompt: signIn.prompt,
        complete: async (signal) => {
          const token = await signIn.poll(signal);
          const expires = expiryFrom(context.scheduler, token.expires_in);
          return {
            token: token.access_token,
            ...(token.refresh_token ? { refresh_token: token.refresh_token } : {}),
            ...(expires ? { expires_at: expires } : {}),
          };
        },
      };
    },
    async refresh(credential, context) {
      if (!credential.refresh_token) {
        throw new CredentialsError('refresh_rejected', `credential ${credential.id} has no refresh token; sign in again`);
      }
      return refreshWithToken(context, {
        tokenUrl: options.tokenUrl,
        clientId: options.clientId,
        refreshToken: credential.refresh_token,
        ...(options.clientSecret ? { clientSecret: options.clientSecret } : {}),
        ...(options.headers ? { headers: options.headers } : {}),
      });
    },
  };
}
