import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { stagedLookup } from '@switchyard/test-support';
import { NodeFailover } from './failover.js';

// A peer gateway that answers its health check, named `localhost` (which resolves locally, were the lookup ignored).
let connections = 0;
const peer = createServer((_req, res) => res.writeHead(200).end('ok'));
peer.on('connection', () => connections++);
await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
const peerUrl = `http://localhost:${(peer.address() as AddressInfo).port}`;
after(async () => {
  peer.closeAllConnections();
  await new Promise((resolve) => peer.close(resolve));
});

const settings = { mode: 'active_active' as const, selfUrl: 'http://127.0.0.1:1', peers: [peerUrl] };

test('peer checks connect through the injected lookup', async () => {
  const { lookup, asked } = stagedLookup(() => '127.0.0.1');
  const failover = new NodeFailover(settings, { lookup });
  try {
    failover.markDead(peerUrl);
    await failover.checkPeers();
    assert.deepEqual(asked, ['localhost']);
    assert.deepEqual(failover.deadPeers(), [], 'the peer answered and is back on the ring');
  } finally {
    await failover.close();
  }
});

test('a peer whose lookup is refused stays off the ring, and is never connected to', async () => {
  const { lookup } = stagedLookup(() => Object.assign(new Error('refusing to connect to localhost'), { code: 'SSRF_BLOCKED' }));
  const failover = new NodeFailover(settings, { lookup });
  const before = connections;
  try {
    failover.markDead(peerUrl);
    await failover.checkPeers();
    assert.deepEqual(failover.deadPeers(), [peerUrl]);
    assert.equal(connections, before);
  } finally {
    await failover.close();
  }
});
