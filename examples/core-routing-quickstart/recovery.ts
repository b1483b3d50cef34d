import { CooldownManager } from '@switchyard/core-routing';
import { FakeScheduler } from '@switchyard/runtime';

const start = Date.parse('2026-01-01T00:00:00Z');
const clock = new FakeScheduler(start); // time moves only when told: the whole story runs in milliseconds
let upstreamIsBack = false;
const cooldowns = new CooldownManager({
  scheduler: clock,
  detection: { errorThreshold: 3, windowMs: 60_000 },
  durations: { openai: { errorMs: 60_000 } },
  recoveryIntervalMs: 30_000,
  healthCheck: async () => upstreamIsBack, // e.g. GET /v1/models answers 200
});
const at = (ms: number) => `+${(ms - start) / 1000}s`;
cooldowns.events.on('cooldown:start', (p) => console.log(`${at(p.startedAt)} ${p.key} cools down (${p.reason}) until ${at(p.endsAt)}`));
cooldowns.events.on('cooldown:check_failed', (e) => console.log(`${at(e.at)} still down: ${e.error}`));
cooldowns.events.on('cooldown:end', (e) => console.log(`${at(e.at)} ${e.key} is back (${e.endedBy})`));
cooldowns.start();

for (let i = 0; i < 3; i++) cooldowns.recordFailure('openai', { kind: 'error', status: 503 });
await clock.advance(90_000); // the end passes at +60s: checked at once, then every 30 s
upstreamIsBack = true;
await clock.advance(30_000);
cooldowns.stop();
