/**
 * @module cloudCodingAssistantFlow
 * Preset: the cloud coding-assistant provider, signed in through an AWS
 * SSO-OIDC style flow (JSON bodies, camelCase fields):
 * 1. `POST /client/register` registers a public client;
 * 2. `POST /device_authorization` starts the device sign-in for a start URL;
 * 3. `POST /token` with the device code is polled until the user finishes;
 * 4. `POST /token` with `grantType: refresh_token` refreshes later.
 *
 * Two account kinds: **builder-ID** (a personal account: a fixed start URL
 * and region) and **identity-center** (an organization: the user's start
 * URL and region). The region picks the endpoint host, so it is checked
 * against the shape of a region name: a user cannot aim the flow at a host
 * of their choosing. Every endpoint is configurable for tests.
 */
import { z } from 'zod';
import { parseWith } from '../credential.js';
import { CredentialsError } from '../errors.js';
import type { AuthFlow, AuthFlowContext, FlowTokens } from './authFlow.js';
import { deviceAuthorization, expiryFrom, outcomeOfError, type PollOutcome, pollForToken, serverText } from './deviceFlow.js';
import { describeUrl, type HttpResponse, jsonOf, parseAnswer, send } from './http.js';

/** Options of {@link cloudCodingAssistantFlow}. */
export interface CloudCodingAssistantFlowOptions {
  /** Flow name (default `cloud-coding-assistant`). */
  name?: string;
  /** Provider of the credentials it creates (default `cloud-coding-assistant`). */
  provider?: string;
  /** The OIDC endpoint of a region (default `https://oidc.<region>.amazonaws.com`). */
  oidcUrl?: (region: string) => string;
  /** Builder-ID start URL (default `https://view.awsapps.com/start`). */
  builderIdStartUrl?: string;
  /** Builder-ID region (default `us-east-1`). */
  builderIdRegion?: string;
  clientName?: string;
  scopes?: readonly string[];
}

const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

/** Sign-in options: which kind of account. */
export const CloudSignInOptionsSchema = z.discriminatedUnion('account', [
  z.strictObject({ account: z.literal('builder_id') }),
  z.strictObject({
    account: z.literal('identity_center'),
    start_url: z.url({ protocol: /^https$/, error: 'must be an https URL (your start page, e.g. https://my-org.awsapps.com/start)' }),
    region: z.string().regex(REGION, 'must be a region name such as us-east-1 or eu-central-1'),
  }),
]);

/** Sign-in options of the cloud coding-assistant flow. */
export type CloudSignInOptions = z.infer<typeof CloudSignInOptionsSchema>;

const RegisterAnswer = z.object({
  clientId: z.string().min(1),
  clientSecret: z.string().min(1),
  clientSecretExpiresAt: z.coerce.number().optional(),
});
const DeviceAnswer = z.object({
  deviceCode: z.string().min(1),
  userCode: z.string().min(1),
  verificationUri: z.url(),
  verificationUriComplete: z.url().optional(),
  expiresIn: z.coerce.number().positive(),
  interval: z.coerce.number().nonnegative().optional(),
});
const TokenAnswer = z.object({
  accessToken: z.string().min(1),
  expiresIn: z.coerce.number().positive().optional(),
  refreshToken: z.string().min(1).optional(),
});

/** AWS error type names, as sent in `x-amzn-errortype` or `__type`, mapped to RFC 8628 codes. */
const AWS_ERRORS: Record<string, string> = {
  AuthorizationPendingException: 'authorization_pending',
  SlowDownException: 'slow_down',
  AccessDeniedException: 'access_denied',
  ExpiredTokenException: 'expired_token',
  InvalidGrantException: 'invalid_grant',
  InvalidClientException: 'invalid_client',
  UnauthorizedClientException: 'unauthorized_client',
};

/** The OAuth error code of an SSO-OIDC error answer, in either of its encodings. */
function errorCode(response: HttpResponse): { error: string; description?: string } | undefined {
  const body = jsonOf(response) as { error?: unknown; error_description?: unknown; __type?: unknown; message?: unknown } | undefined;
  const typeHeader = response.headers['x-amzn-errortype'];
  const typeName = String(Array.isArray(typeHeader) ? typeHeader[0] : (typeHeader ?? body?.__type ?? ''))
    .split(':')[0]!
    .split('#')
    .pop()!;
  const error = typeof body?.error === 'string' ? body.error : AWS_ERRORS[typeName];
  if (!error) return undefined;
  const description =
    typeof body?.error_description === 'string' ? body.error_description : typeof body?.message === 'string' ? body.message : undefined;
  return { error, ...(description ? { description: serverText(description)! } : {}) };
}

/**
 * The cloud coding-assistant preset.
 *
 * @example
 * ```ts
 * const manager = new CredentialManager({ store, flows: [cloudCodingAssistantFlow()] });
 * const session = await manager.signIns.start('cloud-coding-assistant', {
 *   account: 'identity_center', start_url: 'https://my-org.awsapps.com/start', region: 'eu-central-1',
 * });
 * ```
 */
export function cloudCodingAssistantFlow(options: CloudCodingAssistantFlowOptions = {}): AuthFlow {
  const name = options.name ?? 'cloud-coding-assistant';
  const oidcUrl = options.oidcUrl ?? ((region: string) => `https://oidc.${region}.amazonaws.com`);
  const builderId = {
    start_url: options.builderIdStartUrl ?? 'https://view.awsapps.com/start',
    region: options.builderIdRegion ?? 'us-east-1',
  };
  const scopes = [...(options.scopes ?? ['codewhisperer:completions', 'codewhisperer:analysis', 'codewhisperer:conversations'])];
  const clientName = options.clientName ?? 'switchyard';

  const post = (context: AuthFlowContext, base: string, path: string, body: unknown, code: 'authorization_failed' | 'refresh_failed') =>
    send(
      context.http,
      {
        method: 'POST',
        url: `${base}${path}`,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        ...(context.signal ? { signal: context.signal } : {}),
      },
      code,
    );

  const tokensOf = (context: AuthFlowContext, answer: z.infer<typeof TokenAnswer>, previousRefresh?: string): FlowTokens => {
    const expires = expiryFrom(context.scheduler, answer.expiresIn);
    const refresh = answer.refreshToken ?? previousRefresh;
    return { token: answer.accessToken, ...(refresh ? { refresh_token: refresh } : {}), ...(expires ? { expires_at: expires } : {}) };
  };

  return {
    name,
    provider: options.provider ?? 'cloud-coding-assistant',
    async start(input, context) {
      const choice = parseWith(CloudSignInOptionsSchema, input, 'sign-in options');
      const account = choice.account === 'builder_id' ? { ...builderId, account: choice.account } : choice;
      const base = oidcUrl(account.region);
      const registered = await post(
        context,
        base,
        '/client/register',
        { clientName, clientType: 'public', scopes },
        'authorization_failed',
      );
      if (registered.status !== 200) {
        throw new CredentialsError(
          'authorization_failed',
          `${describeUrl(`${base}/client/register`)} refused the client registration (HTTP ${registered.status})`,
        );
      }
      const client = parseAnswer(RegisterAnswer, registered, 'client registration', 'authorization_failed');
      const started = await post(
        context,
        base,
        '/device_authorization',
        { clientId: client.clientId, clientSecret: client.clientSecret, startUrl: account.start_url },
        'authorization_failed',
      );
      if (started.status !== 200) {
        const error = errorCode(started);
        throw new CredentialsError(
          'authorization_failed',
          `${describeUrl(`${base}/device_authorization`)} refused the sign-in (HTTP ${started.status}${error ? `: ${error.error}` : ''}); check the start URL and region`,
        );
      }
      const answer = parseAnswer(DeviceAnswer, started, 'device authorization', 'authorization_failed');
      const authorization = deviceAuthorization(context.scheduler, {
        deviceCode: answer.deviceCode,
        userCode: answer.userCode,
        verificationUri: answer.verificationUri,
        verificationUriComplete: answer.verificationUriComplete,
        expiresInSeconds: answer.expiresIn,
        intervalSeconds: answer.interval,
      });
      return {
        prompt: authorization.prompt,
        complete: async (signal) => {
          const pollContext = { ...context, ...(signal ? { signal } : {}) };
          const token = await pollForToken({
            scheduler: context.scheduler,
            intervalMs: authorization.intervalMs,
            expiresAtMs: authorization.expiresAtMs,
            ...(signal ? { signal } : {}),
            attempt: async (): Promise<PollOutcome<z.infer<typeof TokenAnswer>>> => {
              let response: HttpResponse;
              try {
                response = await post(
                  pollContext,
                  base,
                  '/token',
                  {
                    clientId: client.clientId,
                    clientSecret: client.clientSecret,
                    grantType: 'urn:ietf:params:oauth:grant-type:device_code',
                    deviceCode: authorization.deviceCode,
                  },
                  'authorization_failed',
                );
              } catch (error) {
                if ((error as CredentialsError).code === 'aborted') throw error;
                return { kind: 'retry', reason: (error as Error).message };
              }
              if (response.status >= 500 || response.status === 429) return { kind: 'retry', reason: `HTTP ${response.status}` };
              const error = errorCode(response);
              if (error) return outcomeOfError(error.error, error.description);
              const parsed = TokenAnswer.safeParse(jsonOf(response));
              return parsed.success && response.status === 200
                ? { kind: 'token', value: parsed.data }
                : { kind: 'error', message: `unexpected answer from ${describeUrl(`${base}/token`)} (HTTP ${response.status})` };
            },
          });
          const host = new URL(account.start_url).host;
          return {
            ...tokensOf(context, token),
            label: account.account === 'builder_id' ? 'builder-ID' : `identity-center ${host}`,
            params: {
              account: account.account,
              region: account.region,
              start_url: account.start_url,
              client_id: client.clientId,
              ...(client.clientSecretExpiresAt
                ? { client_secret_expires_at: new Date(client.clientSecretExpiresAt * 1000).toISOString() }
                : {}),
            },
            secrets: { client_secret: client.clientSecret },
          };
        },
      };
    },
    async refresh(credential, context) {
      const params = credential.oauth?.params ?? {};
      const clientSecret = credential.oauth?.secrets.client_secret;
      if (!credential.refresh_token || !params.client_id || !clientSecret || !params.region || !REGION.test(params.region)) {
        throw new CredentialsError(
          'refresh_rejected',
          `credential ${credential.id} lacks its client registration or refresh token; sign in again`,
        );
      }
      const base = oidcUrl(params.region);
      const response = await post(
        context,
        base,
        '/token',
        { clientId: params.client_id, clientSecret, grantType: 'refresh_token', refreshToken: credential.refresh_token },
        'refresh_failed',
      );
      if (response.status >= 500 || response.status === 429) {
        throw new CredentialsError('refresh_failed', `${describeUrl(`${base}/token`)} answered HTTP ${response.status}`);
      }
      if (response.status !== 200) {
        const error = errorCode(response);
        throw new CredentialsError(
          'refresh_rejected',
          `${describeUrl(`${base}/token`)} rejected the refresh (${error?.error ?? `HTTP ${response.status}`}); sign in again`,
        );
      }
      return tokensOf(context, parseAnswer(TokenAnswer, response, 'token refresh', 'refresh_failed'), credential.refresh_token);
    },
  };
}
