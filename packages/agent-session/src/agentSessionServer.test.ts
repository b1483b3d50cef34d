// The URL the server announces must be one it answers to.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serverUrl } from './agentSessionServer.js';
import { DEFAULT_ALLOWED_HOSTS, hostAllowed } from './http/access.js';

test('a wildcard listen address is announced as loopback, which the default host allowlist serves', () => {
  const cases: [host: string, url: string][] = [
    ['0.0.0.0', 'http://127.0.0.1:3284'],
    ['::', 'http://[::1]:3284'],
    ['[::]', 'http://[::1]:3284'],
    ['0:0:0:0:0:0:0:0', 'http://[::1]:3284'],
    ['127.0.0.1', 'http://127.0.0.1:3284'],
    ['::1', 'http://[::1]:3284'],
    ['localhost', 'http://localhost:3284'],
    ['192.168.1.20', 'http://192.168.1.20:3284'],
    ['fe80::1', 'http://[fe80::1]:3284'],
  ];
  for (const [host, url] of cases) assert.equal(serverUrl(host, 3284), url, host);
  for (const host of ['0.0.0.0', '::']) assert.ok(hostAllowed(new URL(serverUrl(host, 3284)).host, DEFAULT_ALLOWED_HOSTS), host);
});
