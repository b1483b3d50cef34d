import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { stagedLookup, startTcpProxy } from '@switchyard/test-support';
import { EventEmitter } from 'eventemitter3';
import { createObservability } from '../observability.js';
import { startReceiver, until } from '../testing/fixtures.js';
import { startMailSink } from '../testing/mailSink.js';
import { ChatWebhookNotifier } from './chatNotifier.js';
import { NotificationDispatcher } from './dispatcher.js';
import { EmailNotifier } from './emailNotifier.js';
import type { AlertNotification } from './notification.js';
import { PagerNotifier } from './pagerNotifier.js';

const START = Date.parse('2026-03-01T00:00:00Z');

/** Undoes quoted-printable (RFC 2045), which nodemailer uses for non-ASCII text bodies. */
const unquote = (raw: string) =>
  Buffer.from(
    raw.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
    'latin1',
  ).toString('utf8');

const firing: AlertNotification = {
  kind: 'alert',
  status: 'firing',
  rule: 'provider_down',
  severity: 'critical',
  provider: 'openai',
  condition: 'provider_health == unhealthy',
  summary: 'provider_health == unhealthy for openai for 2m',
  values: { 'provider_health == unhealthy': 'unhealthy' },
  activeSince: START,
  firedAt: START + 120_000,
  resolvedAt: null,
  dedupKey: 'switchyard:provider_down:openai',
};
const resolved: AlertNotification = { ...firing, status: 'resolved', resolvedAt: START + 300_000 };

describe('each notifier against a local receiver', () => {
  test('chat: a Slack-style incoming-webhook payload', async () => {
    const hook = await startReceiver();
    after(() => hook.close());
    const chat = new ChatWebhookNotifier({ webhookUrl: `${hook.url}/services/T000/B000/XXXX`, channel: '#alerts' });
    await chat.send(firing, AbortSignal.timeout(10_000));
    const [request] = hook.received;
    assert.equal(request!.method, 'POST');
    assert.equal(request!.url, '/services/T000/B000/XXXX');
    assert.equal(request!.headers['content-type'], 'application/json');
    const body = request!.json() as {
      channel: string;
      text: string;
      attachments: { color: string; fields: { title: string; value: string }[] }[];
    };
    assert.equal(body.channel, '#alerts');
    assert.equal(body.text, '[FIRING] provider_down · openai (critical)');
    assert.equal(body.attachments[0]!.color, '#d0021b');
    assert.ok(body.attachments[0]!.fields.some((f) => f.title === 'provider' && f.value === 'openai'));
  });

  test('pager: Events v2 trigger and resolve with the same dedup_key; rotations as change events', async () => {
    const pd = await startReceiver((req) => ({
      status: 202,
      body: JSON.stringify({ status: 'success', dedup_key: (req.json() as { dedup_key?: string }).dedup_key }),
    }));
    after(() => pd.close());
    const pager = new PagerNotifier({ serviceKey: 'R0UTINGKEY', url: pd.url });
    await pager.send(firing, AbortSignal.timeout(10_000));
    await pager.send(resolved, AbortSignal.timeout(10_000));
    await pager.send(
      { kind: 'credential_rotation', provider: 'openai', from: 'k1', to: 'k2', reason: 'exhausted', at: START },
      AbortSignal.timeout(10_000),
    );
    const [trigger, resolve, change] = pd.received.map((r) => ({ url: r.url, body: r.json() as Record<string, unknown> }));
    assert.equal(trigger!.url, '/v2/enqueue');
    assert.equal(trigger!.body.routing_key, 'R0UTINGKEY');
    assert.equal(trigger!.body.event_action, 'trigger');
    assert.equal(trigger!.body.dedup_key, 'switchyard:provider_down:openai');
    const payload = trigger!.body.payload as Record<string, unknown>;
    assert.equal(payload.severity, 'critical');
    assert.equal(payload.source, 'switchyard');
    assert.equal(payload.component, 'openai');
    assert.equal(payload.timestamp, new Date(START + 120_000).toISOString());
    assert.deepEqual(resolve, {
      url: '/v2/enqueue',
      body: { routing_key: 'R0UTINGKEY', event_action: 'resolve', dedup_key: 'switchyard:provider_down:openai' },
    });
    assert.equal(change!.url, '/v2/change/enqueue');
    assert.match(String((change!.body.payload as Record<string, unknown>).summary), /Credential rotated · openai/);
  });

  test('email: SMTP through smtp-server, with authentication', async () => {
    const sink = await startMailSink({ auth: { user: 'gw', pass: 's3cret' } });
    after(() => sink.close());
    const email = new EmailNotifier({
      smtpServer: `smtp://gw:s3cret@127.0.0.1:${sink.port}`,
      from: 'gateway@example.test',
      to: ['oncall@example.test', 'lead@example.test'],
    });
    after(() => email.close());
    await email.send(firing, AbortSignal.timeout(10_000));
    const [mail] = sink.mails;
    assert.equal(mail!.from, 'gateway@example.test');
    assert.deepEqual(mail!.to, ['oncall@example.test', 'lead@example.test']);
    assert.equal(mail!.user, 'gw');
    assert.match(mail!.raw, /^Subject: =\?UTF-8\?Q\?=5BFIRING=5D_provider=5Fdown/m);
    const body = unquote(mail!.raw);
    assert.match(body, /provider_health == unhealthy for openai for 2m/);
    assert.match(body, /provider\s+openai/);
  });

  test('email: a 4xx reply is retryable, a 5xx is not, and errors never carry the password', async () => {
    const sink = await startMailSink();
    after(() => sink.close());
    const email = new EmailNotifier({
      smtpServer: `127.0.0.1:${sink.port}`,
      from: 'a@example.test',
      to: ['b@example.test'],
      password: 'never-shown',
    });
    after(() => email.close());
    sink.failures.push(451, 554);
    await assert.rejects(
      email.send(firing, AbortSignal.timeout(10_000)),
      (e: { retryable: boolean; message: string }) => e.retryable && !e.message.includes('never-shown'),
    );
    await assert.rejects(email.send(firing, AbortSignal.timeout(10_000)), (e: { retryable: boolean }) => e.retryable === false);
  });

  test('email: with `lookup`, each connection resolves the server with it, and a refusal sends nothing', async () => {
    const sink = await startMailSink();
    // Counts the connections that reach the sink.
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: sink.port });
    after(async () => {
      await proxy.close();
      await sink.close();
    });
    // A name no real resolver knows: only the given lookup can make it 127.0.0.1 (nodemailer's own resolver fails).
    let answer: string | Error = '127.0.0.1';
    const dns = stagedLookup((hostname) => (hostname === 'mail.staged.test' ? answer : new Error(`getaddrinfo ENOTFOUND ${hostname}`)));
    const email = new EmailNotifier({
      smtpServer: `mail.staged.test:${proxy.port}`,
      from: 'a@example.test',
      to: ['b@example.test'],
      lookup: dns.lookup,
    });
    after(() => email.close());
    await email.send(firing, AbortSignal.timeout(10_000));
    assert.equal(sink.mails.length, 1);
    assert.deepEqual(dns.asked, ['mail.staged.test']);

    answer = Object.assign(new Error('refusing to connect to mail.staged.test'), { code: 'SSRF_BLOCKED' });
    await assert.rejects(
      email.send(firing, AbortSignal.timeout(10_000)),
      (e: { retryable: boolean; message: string }) => e.retryable === false && e.message === 'email: SSRF_BLOCKED',
    );
    assert.equal(proxy.accepted, 1, 'the refused send opened no connection');
    assert.equal(sink.mails.length, 1);
  });
});

describe('the dispatcher', () => {
  test('a failing channel retries with backoff and never blocks the others', async () => {
    const clock = new FakeScheduler(START);
    const hook = await startReceiver();
    const pd = await startReceiver();
    after(() => Promise.all([hook.close(), pd.close()]));
    hook.statuses.push(500, 503);
    const dispatcher = new NotificationDispatcher({
      notifiers: [new ChatWebhookNotifier({ webhookUrl: hook.url }), new PagerNotifier({ serviceKey: 'k', url: pd.url })],
      scheduler: clock,
      initialBackoffMs: 1000,
      random: () => 0.5,
    });
    dispatcher.dispatch(firing, ['chat', 'pager', 'email']);
    await hook.waitFor(1);
    await pd.waitFor(1);
    // The pager delivered while chat waits out its first backoff (1 s step: 500 + 0.5 × 500 = 750 ms).
    await until(() => dispatcher.recent().some((r) => r.channel === 'pager' && r.outcome === 'delivered'), 10_000, 'pager delivery');
    await clock.advance(749);
    assert.equal(hook.received.length, 1, 'no retry before the backoff');
    await clock.advance(1);
    await hook.waitFor(2);
    await clock.advance(1500); // second step 2 s: 1000 + 500
    await hook.waitFor(3);
    await dispatcher.idle();
    const chat = dispatcher.recent().find((r) => r.channel === 'chat')!;
    assert.deepEqual([chat.outcome, chat.attempts], ['delivered', 3]);
    assert.equal(pd.received.length, 1);
  });

  test('a permanent failure (400) is not retried; retries stop at max_attempts; order is kept per channel', async () => {
    const clock = new FakeScheduler(START);
    const hook = await startReceiver();
    after(() => hook.close());
    hook.statuses.push(400, 500, 500, 500);
    const dispatcher = new NotificationDispatcher({
      notifiers: [new ChatWebhookNotifier({ webhookUrl: hook.url })],
      scheduler: clock,
      maxAttempts: 3,
      initialBackoffMs: 100,
      random: () => 0,
    });
    dispatcher.dispatch(firing, ['chat']);
    dispatcher.dispatch(resolved, ['chat']);
    await hook.waitFor(1);
    await until(() => dispatcher.recent().length === 1, 10_000, 'first outcome');
    assert.deepEqual(
      dispatcher.recent().map((r) => [r.outcome, r.attempts, r.error]),
      [['failed', 1, 'chat: HTTP 400: failed']],
    );
    for (let i = 2; i <= 4; i++) {
      await hook.waitFor(i);
      await clock.advance(1000);
    }
    await dispatcher.idle();
    assert.deepEqual(
      dispatcher.recent().map((r) => [r.outcome, r.attempts]),
      [
        ['failed', 1],
        ['failed', 3],
      ],
    );
    const texts = hook.received.map((r) => (r.json() as { text: string }).text);
    assert.deepEqual(texts, [
      '[FIRING] provider_down · openai (critical)',
      '[RESOLVED] provider_down · openai (critical)',
      '[RESOLVED] provider_down · openai (critical)',
      '[RESOLVED] provider_down · openai (critical)',
    ]);
  });

  test('an unreachable endpoint is a retryable failure whose message never holds the URL', async () => {
    const clock = new FakeScheduler(START);
    const gone = await startReceiver();
    const url = `${gone.url}/services/SECRET-PATH`;
    await gone.close();
    const dispatcher = new NotificationDispatcher({
      notifiers: [new ChatWebhookNotifier({ webhookUrl: url })],
      scheduler: clock,
      maxAttempts: 2,
      initialBackoffMs: 10,
    });
    dispatcher.dispatch(firing, ['chat']);
    await until(() => clock.pending > 0 || dispatcher.recent().length > 0, 10_000, 'first attempt');
    await clock.advance(100);
    await until(() => dispatcher.recent().length > 0, 10_000, 'outcome');
    const [record] = dispatcher.recent();
    assert.equal(record!.outcome, 'failed');
    assert.equal(record!.attempts, 2);
    assert.match(record!.error!, /request failed/);
    assert.ok(!record!.error!.includes('SECRET-PATH'));
  });
});

test('end to end from config: a provider goes down and up; chat, pager and e-mail each hear it once each way', async () => {
  const clock = new FakeScheduler(START);
  const hook = await startReceiver();
  const pd = await startReceiver(() => ({ status: 202 }));
  const sink = await startMailSink();
  after(() => Promise.all([hook.close(), pd.close(), sink.close()]));
  const lines: string[] = [];
  const obs = createObservability(
    {
      metrics: { process_metrics: false, port: 0 },
      alerts: {
        rules: [
          {
            name: 'provider_down',
            condition: 'provider_health == unhealthy',
            duration: '2m',
            severity: 'critical',
            notifications: ['chat', 'pager', 'email'],
          },
        ],
      },
      notifications: {
        chat: { enabled: true, webhook_url: `${hook.url}/hook`, channel: '#ops' },
        pager: { enabled: true, api_key: 'unused', service_key: 'svc-key', url: pd.url },
        email: { enabled: true, smtp_server: `127.0.0.1:${sink.port}`, from: 'gw@example.test', to: ['oncall@example.test'] },
        credential_rotation: { channels: ['chat', 'email'], min_interval: '5m' },
      },
    },
    { scheduler: clock, logDestination: { write: (line: string) => void lines.push(line) } },
  );
  const health = new EventEmitter();
  const pool = new EventEmitter();
  obs.observeGateway({ health, credentials: pool });
  await obs.start();
  after(() => obs.stop());

  health.emit('health:change', { provider: 'openai', status: 'unhealthy', previous: 'healthy', at: clock.now() });
  for (let i = 0; i < 12; i++) await clock.advance(15_000); // 3 minutes
  await hook.waitFor(1);
  await pd.waitFor(1);
  await until(() => sink.mails.length === 1, 10_000, 'mail');
  health.emit('health:change', { provider: 'openai', status: 'healthy', previous: 'unhealthy', at: clock.now() });
  await clock.advance(15_000);
  await hook.waitFor(2);
  await pd.waitFor(2);
  await until(() => sink.mails.length === 2, 10_000, 'second mail');
  // Rotations: two within min_interval make one notice (chat + email, not pager).
  pool.emit('credential:rotated', { provider: 'openai', from: 'k1', to: 'k2', reason: 'rate_limited' });
  pool.emit('credential:rotated', { provider: 'openai', from: 'k2', to: 'k3', reason: 'rate_limited' });
  await hook.waitFor(3);
  await until(() => sink.mails.length === 3, 10_000, 'rotation mail');
  await obs.dispatcher.idle();

  assert.deepEqual(
    hook.received.map((r) => (r.json() as { text: string }).text),
    ['[FIRING] provider_down · openai (critical)', '[RESOLVED] provider_down · openai (critical)', 'Credential rotated · openai'],
  );
  assert.deepEqual(
    pd.received.map((r) => (r.json() as { event_action: string }).event_action),
    ['trigger', 'resolve'],
  );
  assert.equal(sink.mails.length, 3);
  const report = obs.alertsReport();
  assert.equal(report.enabled, true);
  assert.equal(report.rules[0]!.state, 'inactive');
  assert.ok(report.rules[0]!.last_resolved_at);
  assert.equal(report.notifications.filter((n) => n.outcome === 'delivered').length, 8);
  const text = await obs.registry!.metrics();
  assert.match(text, /svc_notifications_total\{channel="pager",kind="alert",outcome="delivered"\} 2/);
  assert.ok(lines.some((l) => l.includes('"msg":"alert_firing"')));
  assert.ok(!lines.join('').includes('svc-key'), 'the pager key is never logged');
});
