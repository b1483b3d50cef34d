/**
 * @module fakeAuthServer
 * A local fake authorization server on 127.0.0.1, port 0, speaking the
 * three dialects the flows use:
 * - `/rfc/*`: plain RFC 8628 + RFC 6749 (form bodies, errors with HTTP 400);
 * - `/gh/*`: GitHub style (errors with HTTP 200) plus an API token exchange;
 * - `/oidc/<region>/*`: AWS SSO-OIDC style (JSON bodies, camelCase, errors
 *   as `x-amzn-errortype` headers or `error` fields).
 * Each device sign-in plays a script of poll answers; every request is
 * recorded for assertions. The `await_user` step stands for a person at the
 * verification page: it answers `authorization_pending` until the test
 * calls {@link FakeAuthServer.approve} or {@link FakeAuthServer.deny} with
 * the user code it saw.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One poll answer of a script. */
export type PollStep =
  | 'authorization_pending'
  | 'slow_down'
  | 'access_denied'
  | 'expired_token'
  | 'server_error'
  | 'token'
  /** Pending until the user code is approved (then `token`) or denied (then `access_denied`). */
  | 'await_user';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, string>;
}

/**
 * The fake server.
 *
 * @example
 * ```ts
 * const server = await new FakeAuthServer().start();
 * server.script = ['authorization_pending', 'slow_down', 'token'];
 * const flow = deviceCodeFlow({ name: 'acme', provider: 'acme', clientId: 'c',
 *   deviceAuthorizationUrl: `${server.url}/rfc/device`, tokenUrl: `${server.url}/rfc/token` });
 * ```
 */
export class FakeAuthServer {
  url = '';
  readonly requests: RecordedRequest[] = [];
  /** Poll answers for the next device codes, consumed one per poll. */
  script: PollStep[] = ['token'];
  expiresIn = 900;
  interval = 5;
  /** How SSO-OIDC errors are sent. */
  oidcErrorStyle: 'header' | 'body' = 'header';
  /** Answers of refresh grants, consumed one per refresh (default: success). */
  refreshScript: ('ok' | 'invalid_grant' | 'server_error')[] = [];
  /** Account tokens the API token exchange refuses. */
  readonly revoked = new Set<string>();
  private server: Server | undefined;
  private counter = 0;
  private readonly scripts = new Map<string, PollStep[]>();
  /** Device code of each user code handed out. */
  private readonly deviceCodes = new Map<string, string>();
  /** What the user did at the verification page, by device code. */
  private readonly decisions = new Map<string, 'approved' | 'denied'>();

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  /** The user approves the sign-in of `userCode` (for the `await_user` step). */
  approve(userCode: string): void {
    this.decide(userCode, 'approved');
  }

  /** The user refuses the sign-in of `userCode` (for the `await_user` step). */
  deny(userCode: string): void {
    this.decide(userCode, 'denied');
  }

  private decide(userCode: string, decision: 'approved' | 'denied'): void {
    const deviceCode = this.deviceCodes.get(userCode);
    if (!deviceCode) throw new Error(`the fake server never handed out user code ${userCode}`);
    this.decisions.set(deviceCode, decision);
  }

  /** Requests to paths ending in `suffix`. */
  calls(suffix: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path.endsWith(suffix));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const isJson = String(req.headers['content-type'] ?? '').includes('json');
    const body: Record<string, string> = raw ? (isJson ? JSON.parse(raw) : Object.fromEntries(new URLSearchParams(raw))) : {};
    const path = (req.url ?? '/').split('?')[0]!;
    this.requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(value));
    };

    if (path === '/rfc/device' || path === '/gh/device/code') {
      const code = this.newDeviceCode();
      return json(200, {
        device_code: code,
        user_code: `USER-${this.counter}`,
        verification_uri: `${this.url}/activate`,
        verification_uri_complete: `${this.url}/activate?code=USER-${this.counter}`,
        expires_in: this.expiresIn,
        interval: this.interval,
      });
    }
    if (path === '/rfc/token' || path === '/gh/access_token') {
      const github = path.startsWith('/gh');
      if (body.grant_type === 'refresh_token') return this.refreshAnswer(json, body.refresh_token ?? '', 'rfc');
      if (body.grant_type !== 'urn:ietf:params:oauth:grant-type:device_code') return json(400, { error: 'unsupported_grant_type' });
      const step = this.nextStep(body.device_code ?? '');
      if (step === 'server_error') return json(503, { error: 'temporarily_unavailable' });
      if (step === 'token') {
        return json(
          200,
          github
            ? { access_token: `gho-account-${body.device_code}`, token_type: 'bearer', scope: 'read:user' }
            : {
                access_token: `access-${body.device_code}`,
                token_type: 'Bearer',
                expires_in: 3600,
                refresh_token: `refresh-${body.device_code}`,
              },
        );
      }
      return json(github ? 200 : 400, { error: step, error_description: `step ${step}` });
    }
    if (path === '/gh/api_token') {
      const account = String(req.headers.authorization ?? '').replace(/^token /, '');
      if (!account.startsWith('gho-') || this.revoked.has(account)) return json(401, { message: 'Bad credentials' });
      return json(200, {
        token: `api-${++this.counter}-${account}`,
        expires_at: Math.floor(Date.now() / 1000) + 1800,
        refresh_in: 1500,
        endpoints: { api: 'https://api.assistant.example' },
      });
    }
    if (path === '/gh/user') return json(200, { login: 'octocat' });

    const oidc = /^\/oidc\/([a-z0-9-]+)\/(client\/register|device_authorization|token)$/.exec(path);
    if (oidc) {
      const [, , operation] = oidc;
      if (operation === 'client/register') {
        return json(200, {
          clientId: `client-${++this.counter}`,
          clientSecret: `secret-${this.counter}`,
          clientSecretExpiresAt: 1_900_000_000,
        });
      }
      if (operation === 'device_authorization') {
        if (!body.clientSecret?.startsWith('secret-')) return json(400, { error: 'invalid_client' });
        const code = this.newDeviceCode();
        return json(200, {
          deviceCode: code,
          userCode: `USER-${this.counter}`,
          verificationUri: `${this.url}/activate`,
          verificationUriComplete: `${this.url}/activate?user_code=USER-${this.counter}`,
          expiresIn: this.expiresIn,
          interval: this.interval,
        });
      }
      if (body.grantType === 'refresh_token') return this.refreshAnswer(json, body.refreshToken ?? '', 'oidc');
      const step = this.nextStep(body.deviceCode ?? '');
      if (step === 'server_error') return json(500, { message: 'internal' });
      if (step === 'token')
        return json(200, {
          accessToken: `oidc-access-${body.deviceCode}`,
          expiresIn: 3600,
          refreshToken: `oidc-refresh-${body.deviceCode}`,
        });
      return this.oidcError(json, step);
    }
    json(404, { error: 'not_found' });
  }

  private oidcError(json: (status: number, value: unknown, headers?: Record<string, string>) => void, step: string): void {
    const names: Record<string, string> = {
      authorization_pending: 'AuthorizationPendingException',
      slow_down: 'SlowDownException',
      access_denied: 'AccessDeniedException',
      expired_token: 'ExpiredTokenException',
      invalid_grant: 'InvalidGrantException',
    };
    if (this.oidcErrorStyle === 'header')
      json(400, { error_description: null }, { 'x-amzn-errortype': `${names[step]}:http://internal.amazon.com/coral/` });
    else json(400, { error: step, error_description: `step ${step}` });
  }

  private refreshAnswer(
    json: (status: number, value: unknown, headers?: Record<string, string>) => void,
    refreshToken: string,
    dialect: 'rfc' | 'oidc',
  ): void {
    const step = this.refreshScript.shift() ?? 'ok';
    const n = ++this.counter;
    if (step === 'server_error') json(503, { error: 'temporarily_unavailable' });
    else if (step === 'invalid_grant' && dialect === 'oidc') this.oidcError(json, 'invalid_grant');
    else if (step === 'invalid_grant') json(400, { error: 'invalid_grant' });
    else if (dialect === 'oidc') json(200, { accessToken: `oidc-access-r${n}`, expiresIn: 3600, refreshToken: `oidc-refresh-r${n}` });
    else json(200, { access_token: `access-r${n}`, expires_in: 3600, refresh_token: `refresh-r${n}-from-${refreshToken}` });
  }

  private newDeviceCode(): string {
    const code = `dc-${++this.counter}`;
    this.scripts.set(code, [...this.script]);
    // Both dialects hand out `USER-<counter>` right after this call.
    this.deviceCodes.set(`USER-${this.counter}`, code);
    return code;
  }

  private nextStep(deviceCode: string): Exclude<PollStep, 'await_user'> {
    const steps = this.scripts.get(deviceCode);
    if (!steps) return 'expired_token';
    const step = steps.length > 1 ? steps.shift()! : (steps[0] ?? 'token');
    if (step !== 'await_user') return step;
    const decision = this.decisions.get(deviceCode);
    return decision === 'approved' ? 'token' : decision === 'denied' ? 'access_denied' : 'authorization_pending';
  }
}
