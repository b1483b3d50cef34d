/**
 * @module settings
 * What the config's `server.*` blocks mean to the libraries the gateway
 * wires: each function reads one block and returns the options object its
 * component takes, at start and at every reload.
 */
import { hostname } from 'node:os';
import type { GatewayConfig } from './config/schema.js';

/** The upstream connection pool (`server.operations.connection_pool`), as `UndiciTransport` takes it. */
export function poolSettings(config: GatewayConfig) {
  const pool = config.server.operations.connection_pool;
  return {
    maxIdleConns: pool.max_idle_conns,
    maxIdleConnsPerHost: pool.max_idle_conns_per_host,
    maxConnsPerHost: pool.max_conns_per_host,
    idleConnTimeoutMs: pool.idle_conn_timeout,
    requestTimeoutMs: pool.request_timeout,
  };
}

/** The response cache (`server.operations.cache`), as `ResponseCache` takes it. */
export function cacheSettings(config: GatewayConfig) {
  const c = config.server.operations.cache;
  return { enabled: c.enabled, streaming: c.streaming, sampled: c.sampled, size: c.size, ttlMs: c.ttl };
}

/** The websocket routes' limits (`server.websocket`). */
export function websocketSettings(config: GatewayConfig) {
  const w = config.server.websocket;
  return {
    maxMessageBytes: w.max_message_size,
    pingIntervalMs: w.ping_interval,
    maxInFlight: w.max_in_flight,
    highWaterMark: w.high_water_mark,
  };
}

/** Health checks (`server.operations.health_check`), as `HealthMonitor` takes them. */
export function healthSettings(config: GatewayConfig) {
  const h = config.server.operations.health_check;
  return {
    enabled: h.enabled,
    intervalMs: h.interval,
    timeoutMs: h.timeout,
    unhealthyThreshold: h.unhealthy_threshold,
    healthyThreshold: h.healthy_threshold,
  };
}

/** Self-healing (`server.operations.self_healing`), as `SelfHealer` takes it. */
export function healingSettings(config: GatewayConfig) {
  const s = config.server.operations.self_healing;
  return { enabled: s.enabled, checkIntervalMs: s.check_interval, maxAttempts: s.max_attempts, backoffMs: s.backoff_duration };
}

/** This node's base URL by its listening address: the machine's host name when it listens on every interface. */
function listeningUrl(config: GatewayConfig): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? hostname() : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

/** Failover (`server.failover`), as `NodeFailover` takes it. */
export function failoverSettings(config: GatewayConfig) {
  const f = config.server.failover;
  return {
    // enabled: false turns failover off whatever the mode.
    mode: f.enabled === false ? ('none' as const) : f.mode,
    backupUrl: f.backup_url,
    failoverTimeoutMs: f.failover_timeout,
    healthCheckIntervalMs: f.health_check_interval,
    peers: f.peers,
    // The specification's active_active names only peers: this node's own URL defaults to where it listens.
    selfUrl: f.self_url ?? (f.mode === 'active_active' ? listeningUrl(config) : undefined),
  };
}
