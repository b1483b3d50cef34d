import assert from 'node:assert/strict';
import { EventEmitter as NodeEmitter } from 'node:events';
import { test } from 'node:test';
import { EventEmitter } from 'eventemitter3';
import type { EventObserver } from './events.js';
import { observeGateway, observeWorkflow } from './observe.js';
import { requestEnd } from './testing/fixtures.js';

test('an observer that throws never reaches the emitter, and the others still run', () => {
  const relay = new EventEmitter();
  const seen: string[] = [];
  const errors: string[] = [];
  const broken: EventObserver = {
    onRequestEnd() {
      throw new Error('boom');
    },
  };
  const working: EventObserver = { onRequestEnd: (e) => void seen.push(e.requestId) };
  observeGateway(
    { relay },
    { metrics: broken, observers: [working], onError: (error, event) => void errors.push(`${event}: ${(error as Error).message}`) },
  );
  assert.doesNotThrow(() => relay.emit('request:end', requestEnd({ requestId: 'x' })));
  assert.deepEqual(seen, ['x']);
  assert.deepEqual(errors, ['request:end: boom']);
});

test('node:events emitters work too, and only events with an interested observer get a listener', () => {
  const relay = new NodeEmitter();
  const workflow = new NodeEmitter();
  const seen: string[] = [];
  const detachGateway = observeGateway({ relay }, { observers: [{ onRequestEnd: (e) => void seen.push(e.requestId) }] });
  const detachWorkflow = observeWorkflow(workflow, { observers: [{ onWorkflowAgentJob: (e) => void seen.push(e.jobId) }] });
  assert.deepEqual(relay.eventNames(), ['request:end']);
  assert.deepEqual(workflow.eventNames(), ['workflow:agent_job']);
  relay.emit('request:end', requestEnd({ requestId: 'r' }));
  workflow.emit('workflow:agent_job', { jobId: 'j', state: 'Running', at: 0 });
  detachGateway();
  detachWorkflow();
  relay.emit('request:end', requestEnd({ requestId: 'late' }));
  assert.deepEqual(seen, ['r', 'j']);
  assert.equal(relay.eventNames().length + workflow.eventNames().length, 0);
});
