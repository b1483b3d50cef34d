/**
 * DNS rebinding in a cluster: a host the management API admitted on one node
 * is guarded on every node whose config names it, whoever wrote that config,
 * and on nodes that start later (the set lives in PostgreSQL). DNS is staged;
 * nothing but loopback and PostgreSQL is contacted.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { eventually, postgresForTests, sqlOnce, stagedLookup } from '@switchyard/test-support';
import { acmeOn, assertRefusedUpstream, chatAcme } from '../../test/rebindingFixture.js';
import { clusterSettings, testCluster } from '../../test/startClusterNode.js';
import { parseConfig } from './config/load.js';
import { Gateway } from './gateway.js';

const postgres = await postgresForTests(import.meta.url);
const KEY = 'cluster-guard-key';
const HOST = 'models.cluster-rebind.test';

describe('DNS rebinding across cluster nodes', { skip: postgres.skip }, async () => {
  if (!postgres.available) return;
  const cluster = testCluster(postgres.url);
  const dir = await mkdtemp(join(tmpdir(), 'guarded-cluster-'));
  after(() => rm(dir, { recursive: true, force: true }));

  let hostAddress = '93.184.216.34';
  const dns = stagedLookup((hostname) => (hostname === HOST ? hostAddress : new Error(`getaddrinfo ENOTFOUND ${hostname}`)));
  // Nothing listens on port 9: a refusal names SSRF_BLOCKED, a connection attempt would say ECONNREFUSED.
  const acme = acmeOn(HOST, 9);
  const nodeConfig = (node: string, providers = '') => `
port: 0
api-keys: [sk-client]
auth-dir: ./auths-${node}
remote-management:
  secret-key: ${KEY}
auth:
  encryption: { enabled: true, key: ${cluster.encryptionKey} }
providers:
  local:
    kind: mock
    models: [local-model]
${providers}server:
  operations:
    cooldown: { enabled: false }
cluster: ${JSON.stringify(clusterSettings(cluster, `node-${node}`))}
metrics: { enabled: false }
`;
  const start = async (node: string, text: string) => {
    const path = join(dir, `node-${node}.yaml`);
    await writeFile(path, text);
    const gateway = await Gateway.start({
      config: parseConfig(text),
      configPath: path,
      logDestination: { write() {} },
      resolve: dns.lookup,
    });
    after(() => gateway.close());
    return { gateway, path };
  };
  const chat = (gateway: Gateway) => chatAcme(gateway.url);

  const a = await start('a', nodeConfig('a'));
  // B's operator named the host in B's own file before anyone used the API: unguarded there, as any operator's host.
  const b = await start('b', nodeConfig('b', acme));
  const c = await start('c', nodeConfig('c'));
  assert.deepEqual(b.gateway.guardedHosts.list(), []);

  test('a PUT on one node records its hosts in PostgreSQL, naming the node', async () => {
    const accepted = await fetch(`${a.gateway.url}/v0/management/config.yaml`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/yaml' },
      body: nodeConfig('a', acme),
    });
    assert.equal(accepted.status, 200, await accepted.clone().text());
    const { rows } = await sqlOnce(postgres.url, 'SELECT host, admitted_by FROM switchyard_guarded_hosts');
    assert.deepEqual(rows, [{ host: HOST, admitted_by: 'node-a' }]);
    // The name rebinds; from here on, a connection that got past the guard would reach loopback only.
    hostAddress = '127.0.0.1';
  });

  test('the reload signal makes a node whose own file already names the host guard it', async () => {
    await eventually('node b to guard the host', () => b.gateway.guardedHosts.has(HOST), 5_000);
  });

  test('a node whose file is replaced by the config the API wrote guards its hosts before connecting', async () => {
    // A config sync copying node a's file to node c: node c applies it as its own file.
    const written = (await readFile(a.path, 'utf8')).replaceAll('node-a', 'node-c').replace('auths-a', 'auths-c');
    await writeFile(`${c.path}.tmp`, written);
    await rename(`${c.path}.tmp`, c.path);
    await eventually('node c to apply the copy', () => c.gateway.config().providers.acme !== undefined, 5_000);
    assert.ok(c.gateway.guardedHosts.has(HOST), 'guarded from the moment the config applies');
    await assertRefusedUpstream(await chat(c.gateway));
    await assertRefusedUpstream(await chat(b.gateway));
  });

  test('a node that starts later, on a file naming the host, guards it from the start', async () => {
    const d = await start('d', nodeConfig('d', acme));
    assert.deepEqual(d.gateway.guardedHosts.list(), [HOST]);
    await assertRefusedUpstream(await chat(d.gateway));
  });
});
