// The relay over a real credential pool: streams that break after their first byte must cool a
// credential down as the same failures before the first byte do (a 429, an overload, a reset), and
// spend its quota once per stream. A broken stream's tokens used to be reported as a success, which
// cleared the credential's failure streak, so broken streams in a row never added up.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CooldownTracker, CredentialPool, MemoryQuotaStore, parseCredential, QuotaTracker } from '@switchyard/credentials';
import { MemorySink, Relay } from '@switchyard/relay';
import { FakeScheduler } from '@switchyard/runtime';
import {
  ANTHROPIC_OPENING_TOKENS,
  anthropicError,
  anthropicOpening,
  ScriptedStreams,
} from '../packages/relay/src/testing/scriptedStreams.js';

const T0 = Date.parse('2026-03-10T12:00:00.000Z');
const KEY = 'claude-key';

/** A relay whose one provider streams `script` to every request, over a pool holding one credential. */
function gateway(script: readonly (string | Error)[]) {
  const clock = new FakeScheduler(T0);
  const quotas = new QuotaTracker({ store: new MemoryQuotaStore(), scheduler: clock });
  quotas.start();
  // No jitter: backoffs are exactly 5 s, 10 s, 20 s, ...
  const pool = new CredentialPool('claude', {
    scheduler: clock,
    quotas,
    cooldowns: new CooldownTracker({ scheduler: clock, random: () => 0.5 }),
  });
  const at = new Date(T0).toISOString();
  pool.upsert([
    parseCredential({
      id: KEY,
      provider: 'claude',
      type: 'api_key',
      token: 'sk-test',
      created_at: at,
      updated_at: at,
      revision: 1,
      quota: { limit: 1_000_000 },
    }),
  ]);
  const cooldowns: number[] = [];
  pool.events.on('cooldown:start', (e) => cooldowns.push(e.until - clock.now()));
  const relay = new Relay({
    providers: [{ name: 'claude', kind: 'anthropic', baseUrl: 'http://127.0.0.1:1/claude', models: ['m'] }],
    transport: new ScriptedStreams({ claude: script }),
    credentials: { pool: () => pool },
    clock,
    scheduler: clock,
    keepAliveMs: 0,
    // One provider, one credential: a failure before the first byte is not tried again.
    maxAttempts: 1,
  });
  const body = { model: 'm', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] };
  let requests = 0;
  /** One streamed request; returns the status the client got. */
  const request = async () => {
    const sink = new MemorySink();
    const rawBody = Buffer.from(JSON.stringify(body));
    await relay.handle({ requestId: `req-${++requests}`, ingress: 'anthropic-messages', model: 'm', stream: true, body, rawBody }, sink);
    return sink.status;
  };
  /** Lets the credential's cooldown, if any, run out. */
  const waitOut = async () => {
    const until = pool.statusOf(KEY)!.cooldown_until;
    if (until !== null) await clock.advance(Date.parse(until) - clock.now());
  };
  return { pool, cooldowns, request, waitOut };
}

const rateLimit = anthropicError('rate_limit_error', 'Slow down');
const overload = anthropicError('overloaded_error', 'Overloaded');
const reset = () => Object.assign(new Error('other side closed'), { code: 'ECONNRESET' });

describe('streams broken after their first byte, against a real credential pool', () => {
  test('three streams broken by a rate-limit event back off as three 429s before the first byte do: 5 s, 10 s, 20 s', async () => {
    const refused = gateway([rateLimit]);
    const broken = gateway([...anthropicOpening, rateLimit]);
    for (let i = 0; i < 3; i++) {
      assert.equal(await refused.request(), 429);
      assert.equal(await broken.request(), 200, 'the stream had started');
      await refused.waitOut();
      await broken.waitOut();
    }
    assert.deepEqual(refused.cooldowns, [5_000, 10_000, 20_000]);
    assert.deepEqual(broken.cooldowns, refused.cooldowns);
    assert.equal(broken.pool.statusOf(KEY)!.quota.used, 3 * ANTHROPIC_OPENING_TOKENS, "each stream's tokens, once");
    assert.equal(refused.pool.statusOf(KEY)!.quota.used, 0);
  });

  for (const [name, breaking] of [
    ['an overload event', () => overload],
    ['a reset connection', reset],
  ] as const) {
    test(`three streams broken by ${name} cool the credential down as three before the first byte do`, async () => {
      const refused = gateway([breaking()]);
      const broken = gateway([...anthropicOpening, breaking()]);
      for (let i = 0; i < 3; i++) {
        await refused.request();
        assert.equal(await broken.request(), 200, 'the stream had started');
        const expected = i < 2 ? null : 'cooldown';
        assert.equal(refused.pool.statusOf(KEY)!.unavailable_reason, expected, `before the first byte, after ${i + 1}`);
        assert.equal(broken.pool.statusOf(KEY)!.unavailable_reason, expected, `after the first byte, after ${i + 1}`);
      }
      assert.deepEqual(broken.cooldowns, [5_000]);
      assert.equal(broken.pool.statusOf(KEY)!.quota.used, 3 * ANTHROPIC_OPENING_TOKENS, "each stream's tokens, once");
    });
  }
});
