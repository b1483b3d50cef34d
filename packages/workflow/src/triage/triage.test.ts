import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import fc from 'fast-check';
import { chatAnswer, fakeServer } from '../../test/fakeServer.js';
import { WorkflowError } from '../errors.js';
import { GatewayClient } from '../llm/gatewayClient.js';
import { MemoryWorkflowStore } from '../store/memoryWorkflowStore.js';
import { BacklogQueue } from './backlogQueue.js';
import { Classifier, classifyHeuristic } from './classifier.js';

test('the weighted classifier sorts typical items', () => {
  const cases: [string, string][] = [
    ['Checkout crashes with a stack trace when the cart is empty', 'bug'],
    ["Login doesn't work on Safari, error 500", 'bug'],
    ['As a user I should be able to export my invoices as CSV', 'feature'],
    ['Add support for SSO via SAML', 'feature'],
    ['What if we let teams share dashboards? Would be nice someday', 'idea'],
    ['Refactor the session module and bump dependencies', 'task'],
    ['Update the README and clean up the docs folder', 'task'],
  ];
  for (const [text, type] of cases) assert.equal(classifyHeuristic(text).type, type, text);
  const c = classifyHeuristic('Checkout crashes with a stack trace');
  assert.ok(c.signals.includes('bug:crash(es|ed|ing)?'));
  assert.equal(c.source, 'heuristic');
  assert.deepEqual(classifyHeuristic('hello there'), {
    type: 'task',
    confidence: 0.25,
    priority: 35,
    scores: { bug: 0, feature: 0, idea: 0, task: 0 },
    signals: [],
    source: 'heuristic',
  });
  assert.ok(
    classifyHeuristic('Security: data loss in production, urgent').priority > classifyHeuristic('Crash when clicking save').priority,
  );
  assert.ok(classifyHeuristic('Minor cosmetic typo on the settings page').priority < 35);
  assert.throws(
    () => classifyHeuristic('   '),
    (e: unknown) => e instanceof WorkflowError && e.details?.field === 'text',
  );
});

test('property: deterministic, confidence in [0, 1], priority in [0, 100]', () => {
  fc.assert(
    fc.property(
      fc.string({ minLength: 1, maxLength: 200 }).filter((s) => s.trim() !== ''),
      (text) => {
        const a = classifyHeuristic(text);
        assert.deepEqual(classifyHeuristic(text), a);
        assert.ok(a.confidence >= 0 && a.confidence <= 1);
        assert.ok(a.priority >= 0 && a.priority <= 100 && Number.isInteger(a.priority));
      },
    ),
  );
});

test('with a gateway configured, an LLM classifies; any failure falls back to the weighted classifier', async () => {
  const answers = [
    () => JSON.stringify({ type: 'idea', confidence: 0.7, priority: 30, reasoning: 'speculative' }),
    () => 'not json at all',
    () => JSON.stringify({ type: 'epic', confidence: 2, priority: 30 }),
  ];
  let call = 0;
  const gateway = await fakeServer((_req, res) => {
    if (call === 3) {
      res.writeHead(503).end('overloaded');
      return;
    }
    chatAnswer(res, answers[call++]!());
  });
  after(() => gateway.close());
  const classifier = new Classifier({ gateway: new GatewayClient({ baseUrl: gateway.url, model: 'triage-model', apiKey: 'sk-test-123' }) });
  assert.equal(classifier.mode, 'llm');
  const llm = await classifier.classify('Checkout crashes on submit');
  assert.deepEqual([llm.type, llm.confidence, llm.priority, llm.source, llm.signals], ['idea', 0.7, 30, 'llm', ['speculative']]);
  const request = gateway.requests[0]!;
  assert.equal(request.url, '/v1/chat/completions');
  assert.equal(request.headers.authorization, 'Bearer sk-test-123');
  assert.equal((request.json as { model: string }).model, 'triage-model');
  for (let i = 0; i < 3; i++) {
    const fallback = await classifier.classify('Checkout crashes on submit');
    assert.equal(fallback.source, 'heuristic');
    assert.equal(fallback.type, 'bug');
    assert.match(fallback.fallback_reason!, /LLM triage failed/);
    assert.doesNotMatch(fallback.fallback_reason!, /sk-test-123/);
  }
});

test('backlog: add, list filtered in queue order, show, pop highest priority then oldest, statuses', async () => {
  const clock = new FakeScheduler(Date.parse('2026-03-01T00:00:00Z'));
  const backlog = new BacklogQueue(new MemoryWorkflowStore(), clock);
  const classifier = new Classifier();
  const low = await backlog.add({ title: 'Tidy logs', type: 'task', priority: 10 });
  await clock.advance(1000);
  const bugOld = await backlog.add({ title: 'Crash A', type: 'bug', priority: 70 });
  await clock.advance(1000);
  const bugNew = await backlog.add({ title: 'Crash B', type: 'bug', priority: 70 });
  await clock.advance(1000);
  const triaged = await backlog.triage('Payment page crashes in production\nSteps: open /pay', classifier);
  assert.equal(triaged.item!.title, 'Payment page crashes in production');
  assert.equal(triaged.item!.description, 'Steps: open /pay');
  assert.equal(triaged.item!.source, 'heuristic');
  assert.equal(triaged.item!.type, 'bug');
  const dry = await backlog.triage('Maybe explore dark mode someday', classifier, { dryRun: true });
  assert.equal(dry.item, null);
  assert.equal(dry.classification.type, 'idea');
  const forced = await backlog.triage('Maybe explore dark mode someday', classifier, { type: 'feature' });
  assert.deepEqual([forced.item!.type, forced.item!.source], ['feature', 'manual']);
  assert.deepEqual(
    (await backlog.list({ type: 'bug' })).map((i) => i.title),
    ['Payment page crashes in production', 'Crash A', 'Crash B'],
  );
  assert.deepEqual(await backlog.show(low.id), low);
  await assert.rejects(backlog.show(999), (e: unknown) => e instanceof WorkflowError && e.code === 'not_found');
  await assert.rejects(
    backlog.list({ status: 'lost' as 'open' }),
    (e: unknown) => e instanceof WorkflowError && e.details?.field === 'status',
  );
  const popped = [await backlog.pop(), await backlog.pop(), await backlog.pop()];
  assert.deepEqual(
    popped.map((i) => i!.title),
    ['Payment page crashes in production', 'Crash A', 'Crash B'],
  );
  assert.ok(popped.every((i) => i!.status === 'in_progress'));
  assert.deepEqual([bugOld.id, bugNew.id], [popped[1]!.id, popped[2]!.id]);
  await backlog.setStatus(bugOld.id, 'done');
  assert.deepEqual(
    (await backlog.list({ status: 'done' })).map((i) => i.id),
    [bugOld.id],
  );
  // "someday" lowers the idea's priority (20 - 15) below the task's 10.
  assert.equal((await backlog.pop())!.title, 'Tidy logs');
  assert.equal((await backlog.pop())!.title, 'Maybe explore dark mode someday');
  assert.equal(await backlog.pop(), null);
});

test('concurrent pops never hand out one item twice', async () => {
  const backlog = new BacklogQueue(new MemoryWorkflowStore());
  for (let i = 0; i < 10; i++) await backlog.add({ title: `item ${i}`, type: 'task', priority: i });
  const popped = await Promise.all(Array.from({ length: 14 }, () => backlog.pop()));
  const ids = popped.filter((p) => p !== null).map((p) => p!.id);
  assert.equal(ids.length, 10);
  assert.equal(new Set(ids).size, 10);
});
