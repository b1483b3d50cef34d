/**
 * @module bindRules
 * Who may reach the gateway: the bind rule (a public bind needs client keys
 * or `--insecure`), checked at start and at every reload, and the access
 * policy (Host and Origin allowlists, trusted proxies) built once per config.
 */
import { AccessPolicy, assertSafeBind, isLoopbackHost } from '@switchyard/http-kit';
import type { GatewayConfig } from './config/schema.js';

/**
 * The bind rule, as it applies at start and at every reload. Runtime client keys count as keys: while any exists
 * (revoked ones too), `/v1` takes no key-less caller, so a public bind with only those is not an open one.
 */
export function checkBind(host: string, config: GatewayConfig, insecure: boolean, runtimeKeys: number): void {
  assertSafeBind({
    host,
    hasKeys: hasClientKeys(config, runtimeKeys),
    insecure,
    server: 'the gateway',
    howToSetKey: 'set api-keys in the config (or create a client key with switchyard keys create on a loopback start first)',
  });
}

/** Whether `/v1` needs a key: `api-keys` in the config, or any runtime client key (the data plane's own test). */
export function hasClientKeys(config: GatewayConfig, runtimeKeys: number): boolean {
  return config['api-keys'].length > 0 || runtimeKeys > 0;
}

/**
 * The access rules of a config, built once per config so a request costs only header reads. A public bind that
 * `--insecure` leaves key-less serves callers from anywhere, so its Host allowlist is open unless `allowed-hosts`
 * names hosts.
 */
export function accessPolicyFor(
  config: GatewayConfig,
  bindHost: string,
  insecure: boolean,
): { policy: AccessPolicy; remoteCallers: boolean } {
  const remoteCallers = insecure && !isLoopbackHost(bindHost) && config['api-keys'].length === 0;
  const allowed = config['allowed-hosts'];
  const selfUrl = config.server.failover.self_url;
  const policy = new AccessPolicy({
    bindHost,
    allowedHosts: remoteCallers && allowed.length === 0 ? ['*'] : allowed,
    ...(selfUrl ? { selfUrl } : {}),
    allowedOrigins: config['allowed-origins'],
    trustedProxies: config['remote-management']['trusted-proxies'],
  });
  return { policy, remoteCallers };
}
