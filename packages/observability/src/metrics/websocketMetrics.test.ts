import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requirePromtool } from '@switchyard/test-support';
import { EventEmitter } from 'eventemitter3';
import { pino } from 'pino';
import { createObservability } from '../observability.js';
import { observeGateway } from '../observe.js';
import { WebsocketMetrics } from './websocketMetrics.js';

const promtool = requirePromtool();

async function value(metrics: WebsocketMetrics, name: string, labels: string): Promise<number | undefined> {
  const text = await metrics.registry.getSingleMetricAsString(name);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('connections open, upgrades by outcome and messages by direction and type follow the websocket events', async () => {
  const metrics = new WebsocketMetrics();
  const websocket = new EventEmitter();
  const detach = observeGateway({ websocket }, { metrics });
  const at = Date.now();
  websocket.emit('websocket:open', { route: '/v1/responses', management: false, at });
  websocket.emit('websocket:open', { route: '/v1/responses', management: true, at });
  websocket.emit('websocket:open', { route: '/v1/ws', management: true, at });
  websocket.emit('websocket:rejected', { route: '/v1/ws', status: 401, reason: 'unauthorized', at });
  websocket.emit('websocket:rejected', { route: 'other', status: 404, reason: 'not_found', at });
  for (let i = 0; i < 5; i++) websocket.emit('websocket:message', { route: '/v1/responses', direction: 'out', type: 'response.event' });
  websocket.emit('websocket:message', { route: '/v1/responses', direction: 'in', type: 'response.create' });
  websocket.emit('websocket:close', { route: '/v1/responses', code: 1000, durationMs: 20, messagesIn: 1, messagesOut: 5, at });

  assert.equal(await value(metrics, 'svc_websocket_connections', 'route="/v1/responses"'), 1);
  assert.equal(await value(metrics, 'svc_websocket_connections', 'route="/v1/ws"'), 1);
  assert.equal(await value(metrics, 'svc_websocket_connections_total', 'route="/v1/responses",outcome="accepted"'), 2);
  assert.equal(await value(metrics, 'svc_websocket_connections_total', 'route="/v1/ws",outcome="unauthorized"'), 1);
  assert.equal(await value(metrics, 'svc_websocket_connections_total', 'route="other",outcome="not_found"'), 1);
  assert.equal(await value(metrics, 'svc_websocket_messages_total', 'route="/v1/responses",direction="out",type="response.event"'), 5);
  assert.equal(await value(metrics, 'svc_websocket_messages_total', 'route="/v1/responses",direction="in",type="response.create"'), 1);
  // Counting continues after a scrape (cells hand over only the delta).
  websocket.emit('websocket:message', { route: '/v1/responses', direction: 'out', type: 'response.event' });
  assert.equal(await value(metrics, 'svc_websocket_messages_total', 'route="/v1/responses",direction="out",type="response.event"'), 6);
  detach();
  websocket.emit('websocket:open', { route: '/v1/ws', management: false, at });
  assert.equal(await value(metrics, 'svc_websocket_connections', 'route="/v1/ws"'), 1, 'detached: no more counting');
});

test('labels stay bounded whatever an emitter passes', async () => {
  const metrics = new WebsocketMetrics({ maxLabelValues: 3 });
  for (let i = 0; i < 50; i++) {
    metrics.onWebsocketMessage({ route: `/path-${i}`, direction: 'in', type: `type-${i}` });
    metrics.onWebsocketRejected({ route: `/path-${i}`, status: 400, reason: `reason-${i}`, at: 0 });
  }
  const text = await metrics.registry.metrics();
  const series = text.split('\n').filter((l) => l.startsWith('svc_websocket_messages_total{'));
  assert.ok(series.length <= 4 * 4, `${series.length} series`);
  assert.equal(await value(metrics, 'svc_websocket_messages_total', 'route="other",direction="in",type="other"'), 47);
  if (promtool.available) promtool.checkMetrics(text);
});

test('createObservability counts websocket events on its registry and logs connections', async () => {
  const lines: Record<string, unknown>[] = [];
  const obs = createObservability(
    { metrics: { port: 0 }, logging: { level: 'info' } },
    { logger: pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) }) },
  );
  const websocket = new EventEmitter();
  const detach = obs.observeGateway({ websocket });
  websocket.emit('websocket:open', { route: '/v1/ws', management: true, at: Date.now() });
  websocket.emit('websocket:close', { route: '/v1/ws', code: 1009, durationMs: 5, messagesIn: 1, messagesOut: 0, at: Date.now() });
  assert.match(await obs.registry!.metrics(), /svc_websocket_connections_total\{route="\/v1\/ws",outcome="accepted"\} 1/);
  assert.deepEqual(
    lines.map((l) => [l.msg, l.route, l.code]),
    [
      ['websocket_opened', '/v1/ws', undefined],
      ['websocket_closed', '/v1/ws', 1009],
    ],
  );
  detach();
  await obs.stop();
});
