import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { ProviderStatsCollector } from './providerStats.js';

test('recent_decisions shows the last 20 decisions, newest first, as emitted', () => {
  const clock = new FakeScheduler(Date.parse('2026-03-01T12:00:00Z'));
  const stats = new ProviderStatsCollector(clock);
  for (let i = 0; i < 25; i++) {
    stats.recordDecision({
      requestId: `req-${i}`,
      model: 'gpt-4o',
      provider: i % 2 === 0 ? 'openai' : 'azure',
      strategy: 'round_robin',
      candidates: ['openai', 'azure'],
      at: Date.parse('2026-03-01T12:00:00Z') + i * 1500,
    });
  }
  const decisions = stats.report(['openai', 'azure']).recent_decisions;
  assert.equal(decisions.length, 20);
  assert.deepEqual(decisions[0], {
    request_id: 'req-24',
    model: 'gpt-4o',
    provider: 'openai',
    strategy: 'round_robin',
    candidates: ['openai', 'azure'],
    at: '2026-03-01T12:00:36.000Z',
  });
  assert.equal(decisions.at(-1)!.request_id, 'req-5');
  assert.equal(decisions.at(-1)!.at, '2026-03-01T12:00:07.500Z');
  // A report is a copy: changing it changes nothing kept.
  decisions[0]!.candidates.push('changed');
  assert.deepEqual(stats.report(['openai']).recent_decisions[0]!.candidates, ['openai', 'azure']);
});
