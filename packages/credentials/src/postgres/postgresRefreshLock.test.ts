import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { postgresForTests } from '@switchyard/test-support';
import { sampleCredential } from '../contract.js';
import { generateEncryptionKey } from '../encryption.js';
import { CredentialManager } from '../manager/credentialManager.js';
import { deviceCodeFlow } from '../oauth/deviceCodeFlow.js';
import { PostgresCredentialStore } from './postgresCredentialStore.js';
import { PostgresRefreshLock } from './postgresRefreshLock.js';

const postgres = await postgresForTests(import.meta.url);
const channel = `refresh_test_${randomBytes(6).toString('hex')}`;
// Advisory locks are database-wide: a namespace of this file's own.
const namespace = `refresh-test-${randomBytes(6).toString('hex')}`;
const KEY = generateEncryptionKey();

/** A token endpoint on 127.0.0.1 that counts refresh grants and answers slowly, to widen any race. */
async function fakeTokenEndpoint() {
  const grants: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const form = new URLSearchParams(body);
      grants.push(form.get('refresh_token') ?? '');
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ access_token: `new-token-${grants.length}`, refresh_token: `rt-${grants.length + 1}`, expires_in: 3600 }),
        );
      }, 150);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, grants, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

if (!postgres.available) {
  test('PostgresRefreshLock', { skip: postgres.skip }, () => {});
} else {
  const { url } = postgres;
  const endpoint = await fakeTokenEndpoint();
  after(() => endpoint.close());

  test('concurrent refreshes on three nodes call the token endpoint once, and every node ends with the new token', async () => {
    const flow = () =>
      deviceCodeFlow({
        name: 'acme',
        provider: 'acme',
        clientId: 'switchyard',
        deviceAuthorizationUrl: `${endpoint.url}/device`,
        tokenUrl: `${endpoint.url}/token`,
      });
    const nodes = await Promise.all(
      ['a', 'b', 'c'].map(async (name) => {
        const store = await PostgresCredentialStore.open({
          connection: url,
          max: 3,
          nodeId: name,
          encryption: { key: KEY },
          events: { channel },
        });
        const refreshLock = await PostgresRefreshLock.open({ connection: url, namespace });
        const manager = new CredentialManager({ store, refreshLock, flows: [flow()], refresh: { enabled: false } });
        return { store, refreshLock, manager };
      }),
    );
    try {
      await nodes[0]!.store.put(
        sampleCredential('acme-1', { provider: 'acme', type: 'oauth', token: 'old-token', refresh_token: 'rt-1', oauth: { flow: 'acme' } }),
      );
      await Promise.all(nodes.map((n) => n.manager.start()));
      for (const { manager } of nodes) assert.equal(manager.pool('acme').acquire().token, 'old-token');

      // Several triggers per node, all at once.
      await Promise.all(nodes.flatMap(({ manager }) => [manager.refresh('acme-1'), manager.refresh('acme-1')]));

      assert.deepEqual(endpoint.grants, ['rt-1'], 'one refresh grant, with the original refresh token');
      for (const { manager } of nodes) assert.equal(manager.pool('acme').acquire().token, 'new-token-1');
      const stored = await nodes[2]!.store.get('acme-1');
      assert.deepEqual([stored?.token, stored?.refresh_token], ['new-token-1', 'rt-2']);
    } finally {
      for (const { manager, store, refreshLock } of nodes) {
        await manager.close();
        await store.close();
        await refreshLock.close();
      }
    }
  });

  test('a second holder waits for the first to release, and gives up after lockTimeoutMs', async () => {
    const first = await PostgresRefreshLock.open({ connection: url, namespace });
    const second = await PostgresRefreshLock.open({ connection: url, namespace, lockTimeoutMs: 200 });
    const third = await PostgresRefreshLock.open({ connection: url, namespace });
    try {
      const release = await first.acquire('k');
      await assert.rejects(second.acquire('k'), { code: 'store_failed' });
      const order: string[] = [];
      const waiting = third.acquire('k').then((releaseThird) => {
        order.push('third acquired');
        return releaseThird;
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      order.push('first releasing');
      await release();
      await (await waiting)();
      assert.deepEqual(order, ['first releasing', 'third acquired']);
      // Other ids and other namespaces are independent.
      const other = await PostgresRefreshLock.open({ connection: url, namespace: `${namespace}-other` });
      const a = await first.acquire('k');
      const b = await other.acquire('k');
      const c = await third.acquire('other-id');
      await Promise.all([a(), b(), c()]);
      await other.close();
    } finally {
      await Promise.all([first.close(), second.close(), third.close()]);
    }
  });
}
