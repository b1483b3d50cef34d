/**
 * @module signInFixture
 * What the sign-in tests share: the fake device-flow server, polled every
 * 50 ms (a test waits for the sign-in, not for RFC 8628's default 5 s), and
 * the two providers whose flows point at it: `acme` (a standard device-code
 * flow) and `cloud` (the cloud coding-assistant preset, flow name
 * `cloud-coding-assistant`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeAuthServer } from '@switchyard/test-support';
import { parseConfig } from '../src/gateway/config/load.js';
import { Gateway } from '../src/gateway/gateway.js';

/** Starts the fake authorization server. */
export async function startFakeAuth(): Promise<FakeAuthServer> {
  const auth = await new FakeAuthServer().start();
  auth.interval = 0.05;
  return auth;
}

/**
 * The `providers:` entries (indented for the `providers:` map) of `acme`
 * and `cloud`. `acme` is a mock unless `acmeBaseUrl` points it at an
 * OpenAI-compatible upstream; `acmeClientSecret` makes it a confidential client.
 */
export function signInProviders(auth: FakeAuthServer, options: { acmeBaseUrl?: string; acmeClientSecret?: string } = {}): string {
  const acmeKind = options.acmeBaseUrl ? `openai-compatible\n    base_url: ${options.acmeBaseUrl}` : 'mock';
  const secret = options.acmeClientSecret ? `, client_secret: ${options.acmeClientSecret}` : '';
  return `  acme:
    kind: ${acmeKind}
    models: [acme-model]
    oauth: { device_authorization_url: '${auth.url}/rfc/device', token_url: '${auth.url}/rfc/token', client_id: switchyard-test${secret} }
  cloud:
    kind: mock
    models: [cloud-model]
    oauth: { preset: cloud-coding-assistant, oidc_url: '${auth.url}/oidc/{region}' }
`;
}

/**
 * A gateway whose management key is `key`, with `acme` and `cloud`, its
 * auth-dir a fresh temporary directory; `close` stops both servers and
 * removes the directory.
 */
export async function startSignInGateway(key: string): Promise<{ auth: FakeAuthServer; gateway: Gateway; close(): Promise<void> }> {
  const auth = await startFakeAuth();
  const authDir = await mkdtemp(join(tmpdir(), 'sign-in-'));
  const gateway = await Gateway.start({
    config: parseConfig(`
port: 0
auth-dir: ${authDir}
remote-management: { secret-key: ${key} }
providers:
${signInProviders(auth)}metrics: { enabled: false }
`),
    logDestination: { write() {} },
  });
  return {
    auth,
    gateway,
    async close() {
      await gateway.close();
      await auth.stop();
      await rm(authDir, { recursive: true, force: true });
    },
  };
}
