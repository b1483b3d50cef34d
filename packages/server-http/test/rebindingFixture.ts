/**
 * @module rebindingFixture
 * What the DNS-rebinding tests share: a gateway config with a management key,
 * a provider on a staged host name, a chat request to it, and the relay's
 * answer when the guard refuses the connection.
 */
import assert from 'node:assert/strict';

/**
 * A gateway config (YAML) managed with `key`, `allow` as `api-call-allow`, a local mock provider on
 * 127.0.0.1 and then `providers` (indented under `providers:`); more top-level keys may be appended.
 */
export const managedConfig = (key: string, allow: string, providers = ''): string => `
port: 0
api-keys: [sk-client]
remote-management:
  secret-key: ${key}
  api-call-allow: ${allow}
providers:
  local:
    kind: mock
    base_url: http://127.0.0.1:11434
    models: [local-model]
${providers}metrics:
  port: 0
`;

/** An `acme` provider (config YAML, indented under `providers:`) on `host`, reached at `port`, without health checks. */
export const acmeOn = (host: string, port: number): string =>
  `  acme:\n    kind: openai-compatible\n    base_url: http://${host}:${port}/v1\n    models: [acme-model]\n    health_check: { enabled: false }\n`;

/** A chat request for `acme-model` through the gateway at `gatewayUrl` (client key `sk-client`). */
export const chatAcme = (gatewayUrl: string): Promise<Response> =>
  fetch(`${gatewayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-client', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'acme-model', messages: [{ role: 'user', content: 'hello' }] }),
  });

/** The relay's answer to a refused connection: an upstream failure in OpenAI's shape, not the server's 500. */
export async function assertRefusedUpstream(response: Response): Promise<void> {
  const text = await response.text();
  assert.equal(response.status, 502, text);
  const { error } = JSON.parse(text);
  assert.equal(error.code, 'upstream_error', text);
  assert.equal(error.type, 'server_error', text);
  assert.match(error.message, /SSRF_BLOCKED/, 'the client learns why');
  assert.doesNotMatch(text, /127\.0\.0\.1/, 'but not the address the name resolved to');
}
