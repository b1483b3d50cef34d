/**
 * Benchmark of @switchyard/credentials on the request path: `acquire()`
 * picks per second at 1,000 credentials for each strategy, against a bare
 * `array[i++ % n]` and against core-routing's `Selector.select()` alone
 * (the floor the pool builds on), all in the same run; then acquire with
 * the feedback a relay gives (`reportSuccess` with token usage).
 *
 *   pnpm bench credentials [--smoke]
 */
import { Selector } from '@switchyard/core-routing';
import { CredentialPool, POOL_STRATEGIES, parseCredential } from '@switchyard/credentials';
import { type Row, report, throughput } from './lib.js';

const N = 1000;
const BATCH = 10_000;
const now = new Date().toISOString();
const credentials = Array.from({ length: N }, (_, i) =>
  parseCredential({
    id: `openai-${String(i).padStart(4, '0')}`,
    provider: 'openai',
    type: i % 4 === 0 ? 'oauth' : 'api_key',
    token: `sk-bench-${i}`,
    priority: i % 10,
    // One in four is an OAuth token with an expiry, so the pick checks it.
    ...(i % 4 === 0 ? { expires_at: new Date(Date.now() + 86_400_000).toISOString() } : {}),
    quota: { limit: i % 3 === 0 ? null : 1_000_000_000 },
    created_at: now,
    updated_at: now,
    revision: 1,
  }),
);
const ids = credentials.map((c) => c.id);

let cursor = 0;
let sink = '';
const baseline = throughput(() => {
  for (let i = 0; i < BATCH; i++) sink = ids[cursor++ % N]!;
  return BATCH;
});
const rows: Row[] = [{ name: `baseline: ids[i++ % ${N}]`, value: baseline, unit: 'picks/s' }];

for (const strategy of POOL_STRATEGIES) {
  const selector = new Selector(
    credentials.map((c) => ({ id: c.id, priority: c.priority })),
    { strategy },
  );
  for (const c of credentials) selector.setRemainingQuota(c.id, c.quota.limit ?? undefined);
  const floor = throughput(() => {
    for (let i = 0; i < BATCH; i++) sink = selector.select();
    return BATCH;
  });
  rows.push({ name: `${strategy}: Selector.select() alone`, value: floor, unit: 'picks/s', baseline });

  const pool = new CredentialPool('openai', { strategy });
  pool.upsert(credentials);
  // Every 10th credential cooling down after a 429, as in a bad hour.
  for (let i = 0; i < N; i += 10) pool.reportFailure(ids[i]!, { kind: 'rate_limit', retryAfterMs: 3_600_000 });
  const picks = throughput(() => {
    for (let i = 0; i < BATCH; i++) sink = pool.acquire().token;
    return BATCH;
  });
  rows.push({ name: `${strategy}: acquire()`, value: picks, unit: 'picks/s', baseline, target: '≥ 1,000,000/s', pass: picks >= 1_000_000 });

  const usage = { inputTokens: 800, outputTokens: 200 };
  const withFeedback = throughput(() => {
    for (let i = 0; i < BATCH; i++) {
      const credential = pool.acquire();
      pool.reportSuccess(credential.id, usage);
      sink = credential.token;
    }
    return BATCH;
  });
  rows.push({ name: `${strategy}: acquire() + reportSuccess(usage)`, value: withFeedback, unit: 'picks/s', baseline });
  pool.close();
}
if (sink === '') throw new Error('unreachable');
report(`credentials acquire() at ${N} credentials`, rows);
// The quota trackers' flush timers are unref'ed; nothing else keeps the process alive.
