import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LookupFunction } from '../../controlPlane/ssrf.js';
import { parseConfig } from './load.js';
import { changedOutboundUrls, outboundUrls, refusedOutboundUrls } from './outboundUrls.js';

const EVERY_DESTINATION = `
providers:
  acme:
    kind: openai-compatible
    enabled: false
    base_url: https://api.acme.test/v1
    health_check: { endpoint: 'https://status.acme.test/ping' }
    options: { quota_url: 'https://api.acme.test/quota' }
    oauth:
      device_authorization_url: https://login.acme.test/device
      token_url: https://login.acme.test/token
      client_id: acme
  assistant:
    kind: openai
    health_check: { endpoint: /models }
    oauth:
      preset: code-assistant
      api_token_url: https://assistant.test/api-token
      user_url: https://assistant.test/user
  cloud:
    kind: openai
    oauth:
      preset: cloud-coding-assistant
      oidc_url: 'https://oidc.{region}.cloud.test'
      builder_id_start_url: https://start.cloud.test/start
      builder_id_region: eu-west-1
server:
  failover:
    mode: active_passive
    backup_url: https://backup.test
    peers: ['https://peer-a.test', 'https://peer-b.test']
    self_url: https://self.test
notifications:
  chat: { webhook_url: 'https://hooks.test/T000/B000/secret' }
  email: { smtp_server: 'smtps://mailer:pw@mail.test:465' }
tracing: { endpoint: 'https://traces.test/v1/traces' }
`;

describe('outboundUrls', () => {
  test('lists every destination the gateway calls, with its config path', () => {
    const urls = outboundUrls(parseConfig(EVERY_DESTINATION));
    assert.deepEqual(
      urls.map(({ path, url }) => [path, url]),
      [
        ['providers.acme.base_url', 'https://api.acme.test/v1'],
        ['providers.acme.health_check.endpoint', 'https://status.acme.test/ping'],
        ['providers.acme.options.quota_url', 'https://api.acme.test/quota'],
        ['providers.acme.oauth.device_authorization_url', 'https://login.acme.test/device'],
        ['providers.acme.oauth.token_url', 'https://login.acme.test/token'],
        ['providers.assistant.oauth.api_token_url', 'https://assistant.test/api-token'],
        ['providers.assistant.oauth.user_url', 'https://assistant.test/user'],
        ['providers.cloud.oauth.oidc_url', 'https://oidc.eu-west-1.cloud.test'],
        ['server.failover.backup_url', 'https://backup.test'],
        ['server.failover.peers.0', 'https://peer-a.test'],
        ['server.failover.peers.1', 'https://peer-b.test'],
        ['notifications.chat.webhook_url', 'https://hooks.test/T000/B000/secret'],
        ['notifications.pager.url', 'https://events.pagerduty.com'],
        ['notifications.email.smtp_server', 'smtp://mail.test:465'],
        ['tracing.endpoint', 'https://traces.test/v1/traces'],
      ],
    );
    const smtp = urls.find((u) => u.path === 'notifications.email.smtp_server')!;
    assert.equal(smtp.value, 'smtps://mailer:pw@mail.test:465', 'compared as written');
    assert.doesNotMatch(smtp.url, /pw/, 'the credentials are not part of the destination');
  });

  test('changed: only values new at their path; list entries are judged by their list', () => {
    const running = parseConfig(EVERY_DESTINATION);
    assert.deepEqual(changedOutboundUrls(running, running), []);
    const next = parseConfig(
      EVERY_DESTINATION.replace("['https://peer-a.test', 'https://peer-b.test']", "['https://peer-b.test', 'https://peer-a.test']")
        .replace('https://api.acme.test/v1', 'https://api2.acme.test/v1')
        // The same URL moved to another path is new there.
        .replace('backup_url: https://backup.test', 'backup_url: https://peer-a.test'),
    );
    assert.deepEqual(
      changedOutboundUrls(next, running).map((u) => u.path),
      ['providers.acme.base_url', 'server.failover.backup_url'],
    );
  });
});

describe('refusedOutboundUrls', () => {
  const resolve = ((host: string, _options: unknown, cb: (e: Error | null, a?: { address: string; family: number }[]) => void) =>
    cb(null, [{ address: host.startsWith('internal') ? '10.1.2.3' : '93.184.216.34', family: 4 }])) as unknown as LookupFunction;

  test('checks new destinations against the running allow-list, and refuses widening it', async () => {
    const running = parseConfig('remote-management: { api-call-allow: [internal-ok.test] }\n');
    const next = parseConfig(`
remote-management: { api-call-allow: [internal-ok.test, internal-new.test] }
providers:
  a: { kind: openai, base_url: 'https://internal-model.test' }
  b: { kind: openai, base_url: 'https://internal-ok.test' }
  c: { kind: openai, base_url: 'https://public.test' }
  d: { kind: openai, base_url: 'https://internal-new.test' }
`);
    const refusals = await refusedOutboundUrls(next, running, resolve);
    assert.deepEqual(
      refusals.map((r) => [r.field, r.range]),
      [
        ['remote-management.api-call-allow', undefined],
        ['providers.a.base_url', 'private'],
        ['providers.d.base_url', 'private'],
      ],
    );
    assert.deepEqual(await refusedOutboundUrls(running, running, resolve), []);
  });
});
