/**
 * @module deviceFlow
 * The OAuth 2.0 device authorization grant (RFC 8628): request a device
 * code, show the user code and verification URI, and poll the token
 * endpoint at the given interval until the user finishes.
 *
 * The poll loop ({@link pollForToken}) is separate from the wire format, so
 * servers that speak RFC 8628 with another encoding (AWS SSO-OIDC's JSON)
 * reuse it. It honours every outcome of RFC 8628 §3.5:
 * `authorization_pending` (poll again), `slow_down` (add 5 seconds to the
 * interval, for good), `access_denied` and `expired_token` (stop), and
 * stops by itself once the device code's `expires_in` has passed. Transport
 * failures back off exponentially, as §3.5 asks.
 *
 * `deviceCodeFlow` (in its own module) builds a complete flow on these
 * parts for any standard server.
 */
import type { Scheduler } from '@switchyard/runtime';
import { z } from 'zod';
import { CredentialsError } from '../errors.js';
import { sleep } from '../util/time.js';
import type { AuthFlowContext, DeviceCodePrompt } from './authFlow.js';
import { describeUrl, formBody, type HttpClient, jsonOf, parseAnswer, send } from './http.js';

/** RFC 8628 §3.5: the increase of the interval on `slow_down`. */
export const SLOW_DOWN_STEP_MS = 5000;
/** RFC 8628 §3.2: the interval when the server gives none. */
export const DEFAULT_INTERVAL_MS = 5000;

/** What one poll of the token endpoint found. */
export type PollOutcome<T> =
  | { kind: 'token'; value: T }
  | { kind: 'pending' }
  | { kind: 'slow_down' }
  | { kind: 'denied'; message?: string }
  | { kind: 'expired'; message?: string }
  /** A transport failure or a 5xx: try again later. */
  | { kind: 'retry'; reason: string }
  /** Anything else: stop. */
  | { kind: 'error'; message: string };

/** Options of {@link pollForToken}. */
export interface PollOptions<T> {
  scheduler: Scheduler;
  intervalMs: number;
  /** When the device code expires (epoch ms). */
  expiresAtMs: number;
  signal?: AbortSignal;
  /** One request to the token endpoint. */
  attempt: () => Promise<PollOutcome<T>>;
  /** Consecutive transport failures tolerated (default 5). */
  maxRetries?: number;
}

/**
 * Polls until the user finishes the sign-in.
 *
 * @throws {CredentialsError} `access_denied`, `expired_token`, `aborted`, or
 * `authorization_failed` (an unexpected answer, or the server unreachable).
 */
export async function pollForToken<T>(options: PollOptions<T>): Promise<T> {
  const { scheduler, signal } = options;
  let interval = Math.max(0, options.intervalMs);
  let retries = 0;
  for (;;) {
    await sleep(scheduler, interval, signal);
    if (scheduler.now() >= options.expiresAtMs) {
      throw new CredentialsError('expired_token', 'the device code expired before the sign-in was completed; start again');
    }
    const outcome = await options.attempt();
    switch (outcome.kind) {
      case 'token':
        return outcome.value;
      case 'pending':
        retries = 0;
        break;
      case 'slow_down':
        retries = 0;
        interval += SLOW_DOWN_STEP_MS;
        break;
      case 'denied':
        throw new CredentialsError('access_denied', `the sign-in was denied${outcome.message ? `: ${outcome.message}` : ''}`);
      case 'expired':
        throw new CredentialsError(
          'expired_token',
          `the device code expired before the sign-in was completed${outcome.message ? ` (${outcome.message})` : ''}; start again`,
        );
      case 'retry':
        if (++retries > (options.maxRetries ?? 5)) {
          throw new CredentialsError('authorization_failed', `the token endpoint keeps failing (${outcome.reason})`);
        }
        interval = Math.min(interval * 2 || DEFAULT_INTERVAL_MS, 60_000);
        break;
      case 'error':
        throw new CredentialsError('authorization_failed', outcome.message);
    }
  }
}

/** An OAuth error answer (RFC 6749 §5.2). */
export const ErrorAnswer = z.object({ error: z.string(), error_description: z.string().optional() });

/** A short, printable server error text (servers' descriptions are not secrets, but may be long). */
export function serverText(value: string | undefined): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point.
  return value === undefined ? undefined : value.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 200);
}

/** Maps an OAuth `error` code of a device-token poll to an outcome. */
export function outcomeOfError<T>(error: string, description?: string): PollOutcome<T> {
  switch (error) {
    case 'authorization_pending':
      return { kind: 'pending' };
    case 'slow_down':
      return { kind: 'slow_down' };
    case 'access_denied':
      return { kind: 'denied', ...(description ? { message: description } : {}) };
    case 'expired_token':
      return { kind: 'expired', ...(description ? { message: description } : {}) };
    default:
      return { kind: 'error', message: `the token endpoint answered ${serverText(error)}${description ? `: ${description}` : ''}` };
  }
}

/** A token response (RFC 6749 §5.1). */
export const TokenAnswer = z.object({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  expires_in: z.coerce.number().positive().optional(),
  refresh_token: z.string().min(1).optional(),
  scope: z.string().optional(),
});

/** A parsed token response. */
export type TokenSet = z.infer<typeof TokenAnswer>;

/**
 * One RFC 8628 §3.4 token request, form-encoded. Accepts errors with HTTP
 * 400 (as the RFC says) and with 200 (as GitHub sends them).
 */
export async function requestDeviceToken(
  http: HttpClient,
  options: {
    tokenUrl: string;
    clientId: string;
    deviceCode: string;
    clientSecret?: string;
    headers?: Record<string, string>;
    signal?: AbortSignal;
  },
): Promise<PollOutcome<TokenSet>> {
  let response: Awaited<ReturnType<HttpClient>>;
  try {
    response = await send(
      http,
      {
        method: 'POST',
        url: options.tokenUrl,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...options.headers },
        body: formBody({
          grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
          device_code: options.deviceCode,
          client_id: options.clientId,
          client_secret: options.clientSecret,
        }),
        ...(options.signal ? { signal: options.signal } : {}),
      },
      'authorization_failed',
    );
  } catch (error) {
    if ((error as CredentialsError).code === 'aborted') throw error;
    return { kind: 'retry', reason: (error as Error).message };
  }
  if (response.status >= 500 || response.status === 429) return { kind: 'retry', reason: `HTTP ${response.status}` };
  const body = jsonOf(response);
  const error = ErrorAnswer.safeParse(body);
  if (error.success) return outcomeOfError(error.data.error, serverText(error.data.error_description));
  const token = TokenAnswer.safeParse(body);
  if (response.status === 200 && token.success) return { kind: 'token', value: token.data };
  return { kind: 'error', message: `unexpected answer from ${describeUrl(options.tokenUrl)} (HTTP ${response.status})` };
}

const DeviceAuthorizationAnswer = z
  .object({
    device_code: z.string().min(1),
    user_code: z.string().min(1),
    verification_uri: z.url().optional(),
    /** Google's name for `verification_uri`. */
    verification_url: z.url().optional(),
    verification_uri_complete: z.url().optional(),
    expires_in: z.coerce.number().positive(),
    interval: z.coerce.number().nonnegative().optional(),
  })
  .refine((a) => a.verification_uri ?? a.verification_url, { path: ['verification_uri'], message: 'missing' });

/** A device authorization (RFC 8628 §3.2), with times made absolute. */
export interface DeviceAuthorization {
  deviceCode: string;
  prompt: DeviceCodePrompt;
  expiresAtMs: number;
  intervalMs: number;
}

/** Requests a device code (RFC 8628 §3.1). */
export async function requestDeviceCode(
  context: AuthFlowContext,
  options: { url: string; clientId: string; scope?: string; headers?: Record<string, string>; extra?: Record<string, string> },
): Promise<DeviceAuthorization> {
  const response = await send(
    context.http,
    {
      method: 'POST',
      url: options.url,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...options.headers },
      body: formBody({ client_id: options.clientId, scope: options.scope, ...options.extra }),
      ...(context.signal ? { signal: context.signal } : {}),
    },
    'authorization_failed',
  );
  if (response.status !== 200) {
    const error = ErrorAnswer.safeParse(jsonOf(response));
    const detail = error.success ? `: ${serverText(error.data.error)}` : '';
    throw new CredentialsError(
      'authorization_failed',
      `${describeUrl(options.url)} refused the device code request (HTTP ${response.status}${detail})`,
    );
  }
  const answer = parseAnswer(DeviceAuthorizationAnswer, response, 'device authorization', 'authorization_failed');
  return deviceAuthorization(context.scheduler, {
    deviceCode: answer.device_code,
    userCode: answer.user_code,
    verificationUri: (answer.verification_uri ?? answer.verification_url)!,
    verificationUriComplete: answer.verification_uri_complete,
    expiresInSeconds: answer.expires_in,
    intervalSeconds: answer.interval,
  });
}

/** Builds a {@link DeviceAuthorization} from a server's answer, in any encoding. */
export function deviceAuthorization(
  scheduler: Scheduler,
  answer: {
    deviceCode: string;
    userCode: string;
    verificationUri: string;
    verificationUriComplete?: string | undefined;
    expiresInSeconds: number;
    intervalSeconds?: number | undefined;
  },
): DeviceAuthorization {
  const expiresAtMs = scheduler.now() + answer.expiresInSeconds * 1000;
  const intervalMs = answer.intervalSeconds === undefined ? DEFAULT_INTERVAL_MS : answer.intervalSeconds * 1000;
  return {
    deviceCode: answer.deviceCode,
    expiresAtMs,
    intervalMs,
    prompt: {
      user_code: answer.userCode,
      verification_uri: answer.verificationUri,
      verification_uri_complete: answer.verificationUriComplete ?? null,
      expires_at: new Date(expiresAtMs).toISOString(),
      interval_ms: intervalMs,
    },
  };
}

/** An ISO expiry `expiresIn` seconds from now, or undefined. */
export function expiryFrom(scheduler: Scheduler, expiresIn: number | undefined): string | undefined {
  return expiresIn === undefined ? undefined : new Date(scheduler.now() + expiresIn * 1000).toISOString();
}

/** A standard (form-encoded) device sign-in in progress: the prompt, and the poll for its token. */
export interface FormDeviceSignIn {
  prompt: DeviceCodePrompt;
  poll(signal?: AbortSignal): Promise<TokenSet>;
}

/**
 * Requests a device code and returns the prompt with a `poll` that waits
 * for the token, for servers that speak RFC 8628 with form bodies (GitHub
 * style servers included: their errors arrive with HTTP 200).
 */
export async function startFormDeviceSignIn(
  context: AuthFlowContext,
  options: {
    deviceAuthorizationUrl: string;
    tokenUrl: string;
    clientId: string;
    clientSecret?: string | undefined;
    scope?: string | undefined;
    headers?: Record<string, string> | undefined;
  },
): Promise<FormDeviceSignIn> {
  const headers = options.headers ? { headers: options.headers } : {};
  const authorization = await requestDeviceCode(context, {
    url: options.deviceAuthorizationUrl,
    clientId: options.clientId,
    ...(options.scope ? { scope: options.scope } : {}),
    ...headers,
  });
  return {
    prompt: authorization.prompt,
    poll: (signal) =>
      pollForToken({
        scheduler: context.scheduler,
        intervalMs: authorization.intervalMs,
        expiresAtMs: authorization.expiresAtMs,
        ...(signal ? { signal } : {}),
        attempt: () =>
          requestDeviceToken(context.http, {
            tokenUrl: options.tokenUrl,
            clientId: options.clientId,
            deviceCode: authorization.deviceCode,
            ...(options.clientSecret ? { clientSecret: options.clientSecret } : {}),
            ...headers,
            ...(signal ? { signal } : {}),
          }),
      }),
  };
}
