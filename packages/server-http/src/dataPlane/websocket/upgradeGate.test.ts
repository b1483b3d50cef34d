import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { decideUpgrade, isWebsocketUpgrade } from './upgradeGate.js';

const deps = {
  acceptsClientKey: () => true,
  management: { authorize: () => ({ ok: false, code: 'not_found', message: 'off' }) as const, matches: () => false },
};
const upgrade = (value: string | undefined) =>
  ({ method: 'GET', url: '/v1/ws', headers: value === undefined ? {} : { upgrade: value } }) as IncomingMessage;

test('websocket is the one upgrade taken, in any case', () => {
  assert.equal(isWebsocketUpgrade(upgrade('WebSocket')), true);
  for (const other of ['h2c', 'websocket, h2c', '', undefined]) assert.equal(isWebsocketUpgrade(upgrade(other)), false, String(other));
});

test('handed an upgrade to another protocol directly, the gate still refuses it with 400 unsupported_upgrade', () => {
  const decision = decideUpgrade(upgrade('h2c'), deps);
  assert.equal(decision.ok, false);
  assert.deepEqual(decision.ok ? undefined : [decision.status, decision.code], [400, 'unsupported_upgrade']);
  assert.deepEqual(decideUpgrade(upgrade('websocket'), deps), { ok: true, route: '/v1/ws', managementKey: undefined });
});
