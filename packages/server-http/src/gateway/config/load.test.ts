// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are the config syntax ${VAR}, not template mistakes
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { configuredFlows, flowKinds } from '../flows.js';
import { failoverSettings } from '../settings.js';
import { ConfigError, parseConfig } from './load.js';

describe('gateway config', () => {
  test('an empty config takes every documented default', () => {
    const config = parseConfig('');
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 8317);
    assert.equal(config['auth-dir'], './auths');
    assert.deepEqual(config['api-keys'], []);
    assert.deepEqual([config.metrics.enabled, config.metrics.port, config.metrics.path], [true, 9090, '/metrics']);
    assert.deepEqual([config.logging.level, config.logging.format], ['info', 'json']);
    assert.deepEqual(
      [config.logging.rotation.max_size, config.logging.rotation.max_age, config.logging.rotation.max_backups],
      [100 * 1024 ** 2, 30 * 86_400_000, 10],
    );
    assert.equal(config.tracing.sample_rate, 0.1);
    assert.deepEqual(
      [config.auth.refresh.enabled, config.auth.refresh.check_interval, config.auth.refresh.refresh_lead_time],
      [true, 300_000, 600_000],
    );
    const ops = config.server.operations;
    assert.deepEqual([ops.load_balancing.strategy, ops.load_balancing.latency_window], ['round_robin', 300_000]);
    assert.deepEqual(
      [ops.connection_pool.max_idle_conns, ops.connection_pool.max_idle_conns_per_host, ops.connection_pool.idle_conn_timeout],
      [100, 10, 90_000],
    );
    assert.deepEqual([ops.batch_processing.max_batch_size, ops.batch_processing.timeout], [10, 100]);
    assert.deepEqual([ops.cache.size, ops.cache.ttl], [1000, 300_000]);
    assert.deepEqual([ops.cooldown.detection_window, ops.cooldown.error_threshold], [60_000, 5]);
    assert.deepEqual(
      [ops.health_check.interval, ops.health_check.timeout, ops.health_check.unhealthy_threshold, ops.health_check.healthy_threshold],
      [30_000, 10_000, 3, 2],
    );
    assert.deepEqual(
      [ops.self_healing.check_interval, ops.self_healing.max_attempts, ops.self_healing.backoff_duration],
      [60_000, 3, 30_000],
    );
    assert.equal(config['remote-management']['secret-key'], '');
    assert.equal(config['quota-exceeded']['switch-project'], true);
  });

  test('a provider block parses with its durations and defaults', () => {
    const config = parseConfig(`
providers:
  openai:
    kind: openai
    models: [gpt-4o, "gpt-4o-*"]
    priority: 1
    quota: { limit: 1000000, reset: daily }
    cost_per_1k_tokens: { input: 0.0025, output: 0.01 }
    cooldown: { rate_limit_duration: 90s }
`);
    const provider = config.providers.openai!;
    assert.equal(provider.cooldown.rate_limit_duration, 90_000);
    assert.equal(provider.cooldown.default_duration, 300_000);
    assert.equal(provider.enabled, true);
    assert.deepEqual(provider.quota, { limit: 1_000_000, reset: 'daily' });
  });

  test('a bad config lists every bad path at once', () => {
    try {
      parseConfig(
        `
port: 99999
api-keys: "not-a-list"
typo_key: 1
providers:
  a:
    kind: openai-compatible
  b:
    kind: frobnicator
    priority: high
server:
  operations:
    cache: { ttl: forever }
    load_balancing: { strategy: random }
`,
        { knownKinds: ['openai', 'openai-compatible', 'mock'] },
      );
      assert.fail('should have thrown');
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      const fields = error.issues.map((i) => i.field);
      for (const expected of [
        'port',
        'api-keys',
        'providers.a.base_url',
        'providers.b.priority',
        'server.operations.cache.ttl',
        'server.operations.load_balancing.strategy',
      ]) {
        assert.ok(fields.includes(expected), `${expected} missing from ${fields.join(', ')}`);
      }
      assert.ok(
        error.issues.some((i) => /typo_key/.test(i.message) || i.field.includes('typo_key')),
        'unknown keys are reported',
      );
      assert.match(error.message, /cache\.ttl: .*duration/);
    }
  });

  test('unknown keys are errors in every section, observability included', () => {
    assert.throws(() => parseConfig('metrics:\n  prot: 9091\n'), /metrics\.prot: unknown key "prot"/);
    assert.throws(() => parseConfig('server:\n  operations:\n    cache: { ttl: 5m, sise: 10 }\n'), /server\.operations\.cache\.sise/);
  });

  test('unknown kinds are reported when the server says which it knows', () => {
    assert.throws(
      () => parseConfig('providers:\n  x:\n    kind: frob\n', { knownKinds: ['mock'] }),
      /providers\.x\.kind: unknown kind "frob"/,
    );
  });

  test('an unknown kind is listed together with the other problems, not only once they are fixed', () => {
    const text = 'port: 99999\nproviders:\n  x: { kind: frob }\n  y: { kind: mock, modles: [m] }\n';
    assert.throws(
      () => parseConfig(text, { knownKinds: ['mock'] }),
      (error: ConfigError) => {
        assert.deepEqual(error.issues.map((i) => i.field).sort(), ['port', 'providers.x.kind', 'providers.y.modles']);
        return true;
      },
    );
  });

  test('providers.<p>.options.thinking_modes: a value other than adaptive or budget is refused, naming its glob', () => {
    const config = parseConfig(`
providers:
  claude:
    kind: anthropic
    options:
      thinking_modes: { house-claude: adaptive, "claude-3-*": budget }
`);
    assert.deepEqual(config.providers.claude!.options.thinking_modes, { 'house-claude': 'adaptive', 'claude-3-*': 'budget' });
    assert.throws(
      () =>
        parseConfig(`
providers:
  claude:
    kind: anthropic
    options:
      thinking_modes: { house-claude: adaptiv, "odd-*": { mode: budget }, "claude-3-*": budget }
  other:
    kind: anthropic
    options: { thinking_modes: adaptive }
`),
      (error: ConfigError) => {
        assert.deepEqual(
          error.issues.map((i) => `${i.field}: ${i.message}`),
          [
            'providers.claude.options.thinking_modes.house-claude: must be "adaptive" or "budget", not "adaptiv"',
            'providers.claude.options.thinking_modes.odd-*: must be "adaptive" or "budget", not {"mode":"budget"}',
            'providers.other.options.thinking_modes: thinking_modes must map model globs to "adaptive" or "budget"',
          ],
        );
        return true;
      },
    );
  });

  test('${VAR} and ${VAR:-default} expand from the environment; a missing one is an error', () => {
    const config = parseConfig("api-keys: ['${GW_KEY}', '${GW_OTHER:-fallback}']\n", { env: { GW_KEY: 'sk-from-env' } });
    assert.deepEqual(config['api-keys'], ['sk-from-env', 'fallback']);
    assert.throws(() => parseConfig("api-keys: ['${NOPE}']\n", { env: {} }), /api-keys\.0: environment variable NOPE is not set/);
  });

  test('server.failover.enabled: false is off whatever the mode; true needs a mode; mode none stays accepted and off', () => {
    const off = parseConfig('server:\n  failover:\n    enabled: false\n    mode: active_passive\n');
    assert.equal(failoverSettings(off).mode, 'none', 'enabled: false wins over the mode (and its backup_url is not required)');
    const on = parseConfig(
      'server:\n  failover:\n    enabled: true\n    mode: active_passive\n    backup_url: http://backup.example:8317\n',
    );
    assert.equal(failoverSettings(on).mode, 'active_passive');
    assert.throws(() => parseConfig('server:\n  failover:\n    enabled: true\n'), /server\.failover\.mode: enabled: true needs mode/);
    assert.throws(() => parseConfig('server:\n  failover:\n    enabled: true\n    mode: none\n'), /server\.failover\.mode/);
    assert.equal(failoverSettings(parseConfig('server:\n  failover:\n    mode: none\n')).mode, 'none');
    assert.equal(failoverSettings(parseConfig('')).mode, 'none');
    // active_active needs no self_url (the specification names only peers): it defaults to the listening address.
    const peersOnly = parseConfig(
      'host: 10.1.2.3\nport: 8400\nserver:\n  failover:\n    mode: active_active\n    peers: [http://10.1.2.4:8400]\n',
    );
    assert.equal(failoverSettings(peersOnly).selfUrl, 'http://10.1.2.3:8400');
    // Left out, the mode decides, as before.
    const moded = parseConfig('server:\n  failover:\n    mode: active_active\n    self_url: http://a.example:8317\n');
    assert.equal(failoverSettings(moded).mode, 'active_active');
  });

  test('YAML syntax errors name the line', () => {
    assert.throws(
      () => parseConfig('port: 8317\nproviders: [unclosed\n'),
      (e: unknown) => e instanceof ConfigError && /line \d+/.test(e.issues[0]!.field),
    );
    assert.throws(() => parseConfig('port: 1\nport: 2\n'), ConfigError);
  });

  test('failover modes need their URLs; encryption needs its key; a cluster needs its database', () => {
    assert.throws(() => parseConfig('server:\n  failover:\n    mode: active_passive\n'), /server\.failover\.backup_url/);
    assert.throws(() => parseConfig('auth:\n  encryption:\n    enabled: true\n'), /auth\.encryption\.key/);
    assert.throws(() => parseConfig('cluster:\n  enabled: true\n'), /cluster\.database_url/);
    // Secrets shared through PostgreSQL are always sealed: a cluster without a key is refused before it starts.
    assert.throws(
      () => parseConfig('cluster:\n  enabled: true\n  database_url: postgres://db/x\n'),
      /auth\.encryption\.enabled: the cluster keeps secrets in PostgreSQL encrypted/,
    );
    const ok = parseConfig(
      'cluster:\n  enabled: true\n  database_url: postgres://db/x\n  reconcile_interval: 5s\nauth:\n  encryption: { enabled: true, key: k }\n',
    );
    assert.deepEqual(
      [
        ok.cluster.auth_events_channel,
        ok.cluster.cooldown_channel,
        ok.cluster.quota_channel,
        ok.cluster.signin_channel,
        ok.cluster.reconcile_interval,
      ],
      ['svc_auth_events_v1', 'svc_cooldown_events_v1', 'svc_quota_totals_v1', 'svc_signin_events_v1', 5_000],
    );
    assert.throws(() => parseConfig('cluster:\n  auth_events_channel: "Bad-Name"\n'), /cluster\.auth_events_channel/);
    assert.throws(() => parseConfig('cluster:\n  quota_channel: "Bad-Name"\n'), /cluster\.quota_channel/);
    assert.throws(() => parseConfig('cluster:\n  signin_channel: "Bad-Name"\n'), /cluster\.signin_channel/);
  });

  test('providers.<p>.oauth: a device-code flow needs its endpoints and client; presets name themselves; one name, one provider', () => {
    const config = parseConfig(`
providers:
  Acme:
    kind: mock
    oauth: { device_authorization_url: https://auth.acme.example/device, token_url: https://auth.acme.example/token, client_id: sy }
  kiro:
    kind: mock
    oauth: { preset: cloud-coding-assistant, oidc_url: 'http://127.0.0.1:9/oidc/{region}' }
`);
    assert.deepEqual(
      [...flowKinds(config)],
      [
        ['code-assistant', 'code-assistant'],
        ['cloud-coding-assistant', 'cloud-coding-assistant'],
        ['acme', 'device-code'],
      ],
    );
    assert.deepEqual(
      configuredFlows(config).map((f) => [f.name, f.provider]),
      [
        ['acme', 'Acme'],
        ['cloud-coding-assistant', 'kiro'],
      ],
    );
    const missing = (() => {
      try {
        parseConfig('providers:\n  acme:\n    kind: mock\n    oauth: { token_url: ftp://x.example/token }\n');
      } catch (error) {
        return (error as ConfigError).issues.map((i) => i.field);
      }
      return [];
    })();
    assert.deepEqual(missing.sort(), [
      'providers.acme.oauth.client_id',
      'providers.acme.oauth.device_authorization_url',
      'providers.acme.oauth.token_url',
    ]);
    assert.throws(
      () =>
        parseConfig(
          'providers:\n  a:\n    kind: mock\n    oauth: { preset: code-assistant }\n  b:\n    kind: mock\n    oauth: { preset: code-assistant }\n',
        ),
      /providers\.b\.oauth\.flow.*already declared by provider a/s,
    );
    assert.throws(
      () => parseConfig("providers:\n  a:\n    kind: mock\n    oauth: { preset: cloud-coding-assistant, oidc_url: 'file:///{region}' }\n"),
      /oidc_url/,
    );
  });
});
