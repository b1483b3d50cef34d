/**
 * @module startClusterNode
 * The one way in-process cluster tests start a node: a gateway with
 * `cluster.enabled` on the test's PostgreSQL, its logs silenced, closed after
 * the test file's tests. NOTIFY channels and the refresh-lock namespace are
 * database-wide, so each test file's cluster names every one of them after a
 * random suffix: two files running at once on one database never hear each
 * other, whichever channels their nodes use. (One gateway without a cluster:
 * `startTestGateway`.)
 */
import { randomBytes } from 'node:crypto';
import { after } from 'node:test';
import { generateEncryptionKey } from '@switchyard/credentials';
import { parse } from 'yaml';
import { parseConfig } from '../src/gateway/config/load.js';
import { Gateway, type GatewayOptions } from '../src/gateway/gateway.js';

/** One test file's cluster: the database its nodes share and what keeps it apart from other files' clusters. */
export interface TestCluster {
  databaseUrl: string;
  /** Ends every channel and lock name of this cluster. */
  suffix: string;
  /** A credential encryption key for the nodes to share (`auth.encryption.key`). */
  encryptionKey: string;
}

/** A cluster of its own on the database at `databaseUrl`. */
export function testCluster(databaseUrl: string): TestCluster {
  return { databaseUrl, suffix: randomBytes(4).toString('hex'), encryptionKey: generateEncryptionKey() };
}

/** The `cluster` settings of node `nodeId`: enabled on the cluster's database, every channel the cluster's own. */
export function clusterSettings(cluster: TestCluster, nodeId: string) {
  const { suffix } = cluster;
  return {
    enabled: true,
    database_url: cluster.databaseUrl,
    node_id: nodeId,
    auth_events_channel: `t_auth_${suffix}`,
    cooldown_channel: `t_cooldown_${suffix}`,
    quota_channel: `t_quota_${suffix}`,
    signin_channel: `t_signin_${suffix}`,
    client_keys_channel: `t_keys_${suffix}`,
    refresh_lock_namespace: `t-refresh-${suffix}`,
  };
}

/**
 * Starts node `nodeId` of `cluster`. `config` is the node's config without its `cluster` block,
 * as an object or as YAML text; the block is added.
 *
 * @example
 * ```ts
 * const cluster = testCluster(postgres.url);
 * const a = await startClusterNode(cluster, 'node-a', { port: 0, providers: { acme: { kind: 'mock', models: ['m'] } } });
 * ```
 */
export async function startClusterNode(
  cluster: TestCluster,
  nodeId: string,
  config: string | Record<string, unknown>,
  options: Omit<GatewayOptions, 'config' | 'logDestination'> = {},
): Promise<Gateway> {
  const settings = typeof config === 'string' ? (parse(config) as Record<string, unknown>) : config;
  const text = JSON.stringify({ ...settings, cluster: clusterSettings(cluster, nodeId) });
  const gateway = await Gateway.start({ ...options, config: parseConfig(text), logDestination: { write() {} } });
  // Close is idempotent: a test may stop a node itself.
  after(() => gateway.close());
  return gateway;
}

/** Starts `count` nodes of `cluster` from one config, one after another: `node-a`, `node-b`, … */
export async function startClusterNodes(
  cluster: TestCluster,
  count: number,
  config: string | Record<string, unknown>,
  options: Omit<GatewayOptions, 'config' | 'logDestination'> = {},
): Promise<Gateway[]> {
  const nodes: Gateway[] = [];
  for (let i = 0; i < count; i++) nodes.push(await startClusterNode(cluster, `node-${String.fromCharCode(97 + i)}`, config, options));
  return nodes;
}
