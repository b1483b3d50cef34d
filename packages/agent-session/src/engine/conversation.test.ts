import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import fc from 'fast-check';
import { type AgentMessage, Conversation, type MessageUpdateEvent, type StatusChangeEvent } from './conversation.js';

test('messages get ids in order; agent replies grow in place until the next user message', () => {
  const clock = new FakeScheduler(Date.parse('2026-01-01T00:00:00Z'));
  const conversation = new Conversation(clock);
  const updates: MessageUpdateEvent[] = [];
  conversation.on('message_update', (event) => updates.push(event));
  conversation.updateAgent('');
  assert.equal(conversation.messages().length, 0, 'empty content never creates a message');
  conversation.updateAgent('Welcome');
  conversation.addUser('hi');
  conversation.updateAgent('Hel');
  conversation.appendAgent('lo');
  conversation.updateAgent('Hello');
  assert.deepEqual(
    conversation.messages().map((m) => [m.id, m.role, m.content]),
    [
      [0, 'agent', 'Welcome'],
      [1, 'user', 'hi'],
      [2, 'agent', 'Hello'],
    ],
  );
  assert.equal(updates.length, 4, 'an unchanged update emits nothing');
  assert.deepEqual(
    updates.map((u) => u.seq),
    [1, 2, 3, 4],
  );
  assert.equal(conversation.messages()[0]!.time, '2026-01-01T00:00:00.000Z');
});

test('status changes are announced once and numbered', () => {
  const conversation = new Conversation(new FakeScheduler(), 'running');
  const seen: StatusChangeEvent[] = [];
  conversation.on('status_change', (event) => seen.push(event));
  conversation.setStatus('running');
  conversation.setStatus('stable');
  conversation.setStatus('stable');
  assert.deepEqual(seen, [{ seq: 1, status: 'stable' }]);
});

test('the end of the agent is announced once, even when the status already was stable, and no status follows it', () => {
  const conversation = new Conversation(new FakeScheduler(), 'stable');
  const seen: StatusChangeEvent[] = [];
  conversation.on('status_change', (event) => seen.push(event));
  conversation.end({ exitCode: 3, signal: null });
  conversation.end({ exitCode: null, signal: 'SIGTERM' });
  conversation.setStatus('running');
  assert.deepEqual(seen, [{ seq: 1, status: 'stable', exited: { exitCode: 3, signal: null } }]);
  assert.deepEqual(conversation.exited, { exitCode: 3, signal: null });
  assert.equal(conversation.status, 'stable');
  assert.deepEqual(conversation.replay().status, seen[0], 'a new subscriber learns it from the status');
  assert.deepEqual(conversation.changesSince(0).status, seen[0], 'so does a resumed one');
});

type Step =
  | { kind: 'user'; text: string }
  | { kind: 'agent'; text: string }
  | { kind: 'status'; stable: boolean }
  | { kind: 'error' }
  | { kind: 'end' };
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('user' as const), text: fc.string({ minLength: 1, maxLength: 5 }) }),
  fc.record({ kind: fc.constant('agent' as const), text: fc.string({ maxLength: 5 }) }),
  fc.record({ kind: fc.constant('status' as const), stable: fc.boolean() }),
  fc.record({ kind: fc.constant('error' as const) }),
  fc.record({ kind: fc.constant('end' as const) }),
);

function play(conversation: Conversation, steps: Step[]): void {
  for (const s of steps) {
    if (s.kind === 'user') conversation.addUser(s.text);
    else if (s.kind === 'agent') conversation.updateAgent(s.text);
    else if (s.kind === 'status') conversation.setStatus(s.stable ? 'stable' : 'running');
    else if (s.kind === 'end') conversation.end({ exitCode: 0, signal: null });
    else conversation.error('boom');
  }
}

test('property: a subscriber that saw everything up to seq N and then applies changesSince(N) has the current state', () => {
  fc.assert(
    fc.property(fc.array(step, { maxLength: 30 }), fc.array(step, { maxLength: 30 }), (first, second) => {
      const conversation = new Conversation(new FakeScheduler());
      play(conversation, first);
      const seen = new Map<number, AgentMessage>(conversation.messages().map((m) => [m.id, m]));
      let status = conversation.status;
      let exited = conversation.exited;
      const mark = conversation.seq;
      play(conversation, second);
      const changes = conversation.changesSince(mark);
      for (const { message } of changes.messages) seen.set(message.id, message);
      if (changes.status) ({ status, exited } = changes.status);
      assert.deepEqual(
        [...seen.values()].sort((a, b) => a.id - b.id),
        conversation.messages(),
      );
      assert.equal(status, conversation.status);
      assert.deepEqual(exited, conversation.exited);
      const seqs = changes.messages.map((m) => m.seq);
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
        'changes come in sequence order',
      );
      assert.ok(changes.errors.every((e) => e.seq > mark));
    }),
  );
});

test('restored history comes first, renumbered; the agent reply after it is a new message, not an edit of the restored one', () => {
  const conversation = new Conversation(new FakeScheduler(0));
  conversation.updateAgent('Banner');
  conversation.restore([
    { role: 'user', content: 'earlier question', time: '2026-01-01T00:00:00.000Z' },
    { role: 'agent', content: 'earlier answer', time: '2026-01-01T00:00:01.000Z' },
  ]);
  conversation.updateAgent('Banner v2');
  assert.deepEqual(
    conversation.messages().map((m) => [m.id, m.role, m.content]),
    [
      [0, 'user', 'earlier question'],
      [1, 'agent', 'earlier answer'],
      [2, 'agent', 'Banner v2'],
    ],
  );
  const fresh = new Conversation(new FakeScheduler(0));
  fresh.restore([{ role: 'agent', content: 'old reply', time: '2026-01-01T00:00:00.000Z' }]);
  fresh.appendAgent('new');
  fresh.appendAgent(' reply');
  assert.deepEqual(
    fresh.messages().map((m) => m.content),
    ['old reply', 'new reply'],
  );
  assert.equal(fresh.replay().messages.length, 2, 'a new subscriber gets the restored history too');
});
