/**
 * A fake of GitHub's OAuth authorization server for the device flow (RFC
 * 8628 as GitHub documents it), on 127.0.0.1:
 *
 * - `POST /login/device/code` with `client_id` and `scope` answers
 *   `{device_code, user_code, verification_uri, expires_in, interval}`;
 * - `POST /login/oauth/access_token` with `client_id`, `device_code` and
 *   `grant_type=urn:ietf:params:oauth:grant-type:device_code` answers
 *   `{"error": "authorization_pending"}` (HTTP 200, as GitHub does) until the
 *   user approves, then `{access_token, token_type: "bearer", scope}`.
 *
 * Bodies may be JSON or form-encoded, as GitHub accepts both. The one
 * deviation: `interval` is 0, so the client polls again at once instead of
 * after GitHub's 5 s; the user "approves" once `approveAfterPolls` pending
 * answers were given, so a test waits on polls, not on time.
 */
import { createServer } from 'node:http';
import { listenOnLoopback } from './listen.js';

export interface FakeOAuthServer {
  url: string;
  /** Pending answers given before the user approves (default 1). */
  approveAfterPolls: number;
  /** Every problem with a request (should stay empty). */
  violations: string[];
  /** Tokens issued, to hand to the fake API. */
  issued: string[];
  polls: number;
  close(): Promise<void>;
}

export async function fakeGitHubOAuth(options: { clientId: string; onToken?: (token: string) => void }): Promise<FakeOAuthServer> {
  const codes = new Map<string, { scope: string; pending: number }>();
  const state: FakeOAuthServer = { url: '', approveAfterPolls: 1, violations: [], issued: [], polls: 0, close: async () => undefined };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const params: Record<string, string> = String(req.headers['content-type'] ?? '').includes('json')
      ? (JSON.parse(raw || '{}') as Record<string, string>)
      : Object.fromEntries(new URLSearchParams(raw));
    const answer = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method !== 'POST') return answer(404, { error: 'not_found' });
    if (!String(req.headers.accept ?? '').includes('application/json')) state.violations.push(`${req.url}: Accept is not application/json`);
    if (params.client_id !== options.clientId) {
      state.violations.push(`${req.url}: unknown client_id`);
      return answer(200, { error: 'incorrect_client_credentials', error_description: 'The client_id is not valid.' });
    }
    if (req.url === '/login/device/code') {
      const device_code = `dc-${codes.size + 1}`;
      codes.set(device_code, { scope: params.scope ?? '', pending: 0 });
      return answer(200, {
        device_code,
        user_code: 'WDJB-MJHT',
        verification_uri: 'https://github.com/login/device',
        expires_in: 900,
        interval: 0,
      });
    }
    if (req.url === '/login/oauth/access_token') {
      if (params.grant_type !== 'urn:ietf:params:oauth:grant-type:device_code')
        state.violations.push(`wrong grant_type ${params.grant_type}`);
      if (params.client_secret !== undefined) state.violations.push('the device flow sends no client secret');
      const code = codes.get(params.device_code ?? '');
      if (!code) return answer(200, { error: 'incorrect_device_code', error_description: 'The device_code provided is not valid.' });
      state.polls++;
      if (code.pending < state.approveAfterPolls) {
        code.pending++;
        return answer(200, { error: 'authorization_pending', error_description: 'The authorization request is still pending.' });
      }
      codes.delete(params.device_code!);
      const token = `gho_device_${state.issued.length + 1}`;
      state.issued.push(token);
      options.onToken?.(token);
      return answer(200, { access_token: token, token_type: 'bearer', scope: code.scope });
    }
    answer(404, { error: 'not_found' });
  });
  const listening = await listenOnLoopback(server);
  state.url = `${listening.origin}`;
  state.close = listening.close;
  return state;
}
