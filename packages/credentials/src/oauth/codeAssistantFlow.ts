/**
 * @module codeAssistantFlow
 * Preset: the code-assistant provider. Sign-in is a GitHub-style device flow
 * (RFC 8628, form-encoded, errors sent with HTTP 200) that yields a
 * long-lived account token; the account token is then exchanged for a
 * short-lived API token, which is what requests carry. The credential keeps
 * the API token as `token` and the account token as `refresh_token`; a
 * refresh repeats the exchange.
 *
 * Every endpoint is configurable (tests point them at a local fake server);
 * the defaults are GitHub's device flow and the Copilot token exchange.
 */
import { z } from 'zod';
import { CredentialsError } from '../errors.js';
import type { AuthFlow, AuthFlowContext, FlowTokens } from './authFlow.js';
import { startFormDeviceSignIn } from './deviceFlow.js';
import { describeUrl, jsonOf, parseAnswer, send } from './http.js';

/** Options of {@link codeAssistantFlow}. */
export interface CodeAssistantFlowOptions {
  /** Flow name (default `code-assistant`). */
  name?: string;
  /** Provider of the credentials it creates (default `code-assistant`). */
  provider?: string;
  clientId?: string;
  scope?: string;
  deviceCodeUrl?: string;
  accessTokenUrl?: string;
  /** The exchange of an account token for an API token. */
  apiTokenUrl?: string;
  /** Where the account's login is read, for the credential's label; null skips it. */
  userUrl?: string | null;
  /** Extra headers for every request (some servers want an editor or user-agent header). */
  headers?: Record<string, string>;
}

const DEFAULTS = {
  name: 'code-assistant',
  provider: 'code-assistant',
  clientId: 'Iv1.b507a08c87ecfe98',
  scope: 'read:user',
  deviceCodeUrl: 'https://github.com/login/device/code',
  accessTokenUrl: 'https://github.com/login/oauth/access_token',
  apiTokenUrl: 'https://api.github.com/copilot_internal/v2/token',
  userUrl: 'https://api.github.com/user',
};

const ApiTokenAnswer = z.object({
  token: z.string().min(1),
  /** Epoch seconds. */
  expires_at: z.coerce.number().positive(),
  refresh_in: z.coerce.number().optional(),
  endpoints: z.object({ api: z.url().optional() }).partial().optional(),
});

/**
 * The code-assistant preset.
 *
 * @example
 * ```ts
 * const manager = new CredentialManager({ store, flows: [codeAssistantFlow()] });
 * const session = await manager.signIns.start('code-assistant');
 * console.log(`Open ${session.prompt.verification_uri} and enter ${session.prompt.user_code}`);
 * const credential = await manager.signIns.wait(session.id);
 * ```
 */
export function codeAssistantFlow(options: CodeAssistantFlowOptions = {}): AuthFlow {
  const o = { ...DEFAULTS, ...options };
  const headers = { 'user-agent': 'switchyard-credentials', ...options.headers };

  async function exchange(
    accountToken: string,
    context: AuthFlowContext,
    code: 'authorization_failed' | 'refresh_failed',
  ): Promise<FlowTokens> {
    const response = await send(
      context.http,
      {
        method: 'GET',
        url: o.apiTokenUrl,
        headers: { ...headers, accept: 'application/json', authorization: `token ${accountToken}` },
        ...(context.signal ? { signal: context.signal } : {}),
      },
      code,
    );
    if (response.status === 401 || response.status === 403 || response.status === 404) {
      throw new CredentialsError(
        code === 'refresh_failed' ? 'refresh_rejected' : 'authorization_failed',
        `${describeUrl(o.apiTokenUrl)} refused the account token (HTTP ${response.status}): the account has no access or the token was revoked; sign in again`,
      );
    }
    if (response.status !== 200) {
      throw new CredentialsError(code, `${describeUrl(o.apiTokenUrl)} answered HTTP ${response.status}`);
    }
    const answer = parseAnswer(ApiTokenAnswer, response, 'API token exchange', code);
    return {
      token: answer.token,
      refresh_token: accountToken,
      expires_at: new Date(answer.expires_at * 1000).toISOString(),
      params: answer.endpoints?.api ? { api_base_url: answer.endpoints.api } : {},
    };
  }

  async function login(accountToken: string, context: AuthFlowContext): Promise<string | undefined> {
    if (!o.userUrl) return undefined;
    try {
      const response = await context.http({
        method: 'GET',
        url: o.userUrl,
        headers: { ...headers, accept: 'application/json', authorization: `token ${accountToken}` },
        ...(context.signal ? { signal: context.signal } : {}),
      });
      const login = (jsonOf(response) as { login?: unknown } | undefined)?.login;
      return response.status === 200 && typeof login === 'string' ? login.slice(0, 100) : undefined;
    } catch {
      return undefined; // The label is a nicety; the sign-in does not depend on it.
    }
  }

  return {
    name: o.name,
    provider: o.provider,
    async start(_input, context) {
      const signIn = await startFormDeviceSignIn(context, {
        deviceAuthorizationUrl: o.deviceCodeUrl,
        tokenUrl: o.accessTokenUrl,
        clientId: o.clientId,
        scope: o.scope,
        headers,
      });
      return {
        prompt: signIn.prompt,
        complete: async (signal) => {
          const account = await signIn.poll(signal);
          const tokens = await exchange(account.access_token, { ...context, ...(signal ? { signal } : {}) }, 'authorization_failed');
          const label = await login(account.access_token, context);
          return { ...tokens, ...(label ? { label } : {}) };
        },
      };
    },
    async refresh(credential, context) {
      if (!credential.refresh_token) {
        throw new CredentialsError('refresh_rejected', `credential ${credential.id} has no account token; sign in again`);
      }
      return exchange(credential.refresh_token, context, 'refresh_failed');
    },
  };
}
