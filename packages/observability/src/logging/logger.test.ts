import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import fc from 'fast-check';
import { loggingConfigSchema } from '../config/schemas.js';
import { observeGateway, observeWorkflow } from '../observe.js';
import { requestEnd } from '../testing/fixtures.js';
import { createLogger } from './logger.js';
import { scrubSecrets } from './redaction.js';

function capture(settings: Record<string, unknown> = {}) {
  const lines: Record<string, unknown>[] = [];
  const clock = new FakeScheduler(Date.parse('2026-03-01T12:00:00Z'));
  const { logger } = createLogger(loggingConfigSchema.parse(settings), {
    clock,
    destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
  });
  return { logger, lines, clock };
}

describe('request lines', () => {
  test('a successful request is one info line with the documented fields', () => {
    const { logger, lines } = capture();
    const relay = new EventEmitter();
    observeGateway({ relay }, { logger });
    relay.emit('request:end', requestEnd({ requestId: 'abc', latencyMs: 812, tokens: { input: 7, output: 9 } }));
    assert.equal(lines.length, 1);
    const line = lines[0]!;
    assert.deepEqual(
      {
        timestamp: line.timestamp,
        level: line.level,
        msg: line.msg,
        provider: line.provider,
        model: line.model,
        request_id: line.request_id,
        latency_ms: line.latency_ms,
        tokens: line.tokens,
      },
      {
        timestamp: '2026-03-01T12:00:00.000Z',
        level: 'info',
        msg: 'request_success',
        provider: 'openai',
        model: 'gpt-4o',
        request_id: 'abc',
        latency_ms: 812,
        tokens: { input: 7, output: 9 },
      },
    );
  });

  test('client-supplied fields are capped in size', () => {
    const { logger, lines } = capture();
    const relay = new EventEmitter();
    observeGateway({ relay }, { logger });
    relay.emit('request:end', requestEnd({ model: `m${'x'.repeat(100_000)}`, requestId: 'r'.repeat(1_000) }));
    const line = lines[0]!;
    assert.ok((line.model as string).length < 300, `model logged at ${(line.model as string).length} chars`);
    assert.match(line.model as string, /^mxxx.*…\(100001 chars\)$/);
    assert.ok((line.request_id as string).length < 300);
    assert.ok(JSON.stringify(line).length < 2_000);
  });

  test('a failed request is request_failed: warn for 4xx, error for 5xx, with the error type', () => {
    const { logger, lines } = capture();
    const relay = new EventEmitter();
    observeGateway({ relay }, { logger });
    relay.emit('request:end', requestEnd({ outcome: 'error', httpStatus: 429, errorType: 'rate_limit' }));
    relay.emit('request:end', requestEnd({ outcome: 'error', httpStatus: 502, errorType: 'upstream_error', provider: null }));
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg, l.error_type, l.provider]),
      [
        ['warn', 'request_failed', 'rate_limit', 'openai'],
        ['error', 'request_failed', 'upstream_error', null],
      ],
    );
  });

  test('a request the client closed is request_client_closed at info, not request_failed', () => {
    const { logger, lines } = capture();
    const relay = new EventEmitter();
    observeGateway({ relay }, { logger });
    relay.emit('request:end', requestEnd({ outcome: 'client_closed', httpStatus: 499, errorType: 'client_closed' }));
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg, l.http_status]),
      [['info', 'request_client_closed', 499]],
    );
  });

  test('workflow events are logged as the same JSON lines', () => {
    const { logger, lines } = capture();
    const workflow = new EventEmitter();
    observeWorkflow(workflow, { logger });
    workflow.emit('workflow:transition', { featureSlug: 'login', wpSequence: 2, from: 'doing', to: 'review', actor: 'agent', at: 0 });
    workflow.emit('workflow:subcommand', { command: 'wp move', exitCode: 1, durationMs: 33, at: 0 });
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg]),
      [
        ['info', 'workflow_transition'],
        ['warn', 'workflow_subcommand'],
      ],
    );
    assert.equal(lines[1]!.exit_code, 1);
  });
});

describe('levels', () => {
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    test(`logging.level ${level} keeps that level and above`, () => {
      const { logger, lines } = capture({ level });
      logger.debug('d');
      logger.info('i');
      logger.warn('w');
      logger.error('e');
      const order = ['debug', 'info', 'warn', 'error'];
      assert.deepEqual(
        lines.map((l) => l.level),
        order.slice(order.indexOf(level)),
      );
    });
  }

  test('attempt lines exist only at debug', () => {
    for (const [level, expected] of [
      ['info', 0],
      ['debug', 1],
    ] as const) {
      const { logger, lines } = capture({ level });
      const relay = new EventEmitter();
      observeGateway({ relay }, { logger });
      relay.emit('attempt:end', {
        requestId: 'r',
        provider: 'p',
        credentialId: null,
        attempt: 1,
        outcome: 'success',
        httpStatus: 200,
        errorType: null,
        latencyMs: 5,
        at: 0,
      });
      assert.equal(lines.length, expected);
    }
  });
});

describe('secrets are redacted', () => {
  test('by key, up to three levels deep, including configured extra paths', () => {
    const { logger, lines } = capture({ redact: ['upstream.custom_secret'] });
    logger.info(
      {
        authorization: 'Bearer top',
        headers: { authorization: 'Bearer one', 'x-api-key': 'k1', accept: 'json' },
        req: { headers: { cookie: 'c=1', 'x-goog-api-key': 'g' } },
        credential: { token: 't', refresh_token: 'r', id: 'cred-7' },
        upstream: { custom_secret: 's', url: 'https://api' },
        api_key: 'k0',
      },
      'hello',
    );
    const text = JSON.stringify(lines[0]);
    for (const secret of ['Bearer top', 'Bearer one', 'k1', 'c=1', '"g"', '"t"', '"r"', '"s"', 'k0'])
      assert.ok(!text.includes(secret), `${secret} in ${text}`);
    assert.match(text, /"accept":"json"/);
    assert.match(text, /"id":"cred-7"/);
    assert.match(text, /"url":"https:\/\/api"/);
  });

  test('in messages and error texts', () => {
    const { logger, lines } = capture();
    logger.warn('upstream rejected Bearer sk-proj-abcdefghijklmnop123');
    logger.error({ err: new Error('GET https://x.test/v1?key=AIzaSyA1234567890abcdefghijk failed') }, 'call failed');
    const text = JSON.stringify(lines);
    assert.ok(!text.includes('abcdefghijklmnop123'), text);
    assert.ok(!text.includes('AIzaSyA1234567890abcdefghijk'), text);
    assert.match(text, /\[REDACTED\]/);
  });

  test('scrubSecrets removes any generated token in any surrounding text (property)', () => {
    const token = fc.stringMatching(/^[A-Za-z0-9]{24,40}$/);
    const shapes = fc.constantFrom(
      (t: string) => `Bearer ${t}`,
      (t: string) => `sk-${t}`,
      (t: string) => `ghp_${t}`,
      (t: string) => `https://u:${t}@host/x`,
      (t: string) => `/v1/models?key=${t}&a=b`,
    );
    fc.assert(
      fc.property(fc.string(), shapes, token, fc.string(), (before, shape, secret, afterText) => {
        const out = scrubSecrets(`${before} ${shape(secret)} ${afterText}`);
        assert.ok(!out.includes(secret), out);
      }),
    );
  });

  test('text without secrets is unchanged', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z .,]{0,60}$/), (text) => {
        assert.equal(scrubSecrets(text), text);
      }),
    );
  });
});
