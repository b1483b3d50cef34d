/**
 * @module readAtStart
 * The config paths a running gateway reads only once, at start, and what
 * follows from them: which paths of a reloaded config wait for a restart
 * (`restart_needed`), and the config as the process actually runs it.
 */
import type { GatewayConfig } from './config/schema.js';

/**
 * Config paths read once, at start: the listeners, where credentials and logs live, the cluster's
 * connections and the key credentials are sealed with (the store was opened with it), and what
 * observability and the relay's selector build their parts from (the tracer's exporter, the
 * notifiers, the alert loop's timer, the latency window's buckets, the quota writes' batching), and
 * the sign-in flows, registered with the credential manager once. A reload that changes one
 * reports it in `restart_needed` rather than pretending it applied. `*` stands for every key of
 * an object.
 */
export const READ_AT_START = [
  'host',
  'port',
  'auth-dir',
  'metrics',
  'cluster',
  'auth.encryption',
  'logging.output',
  'logging.file',
  'logging.rotation',
  'logging.redact',
  'tracing',
  'notifications',
  'alerts.enabled',
  'alerts.evaluation_interval',
  'server.operations.load_balancing.latency_window',
  // The HTTP server checks its connections for the timeout at an interval derived from it, set when it is created.
  'server.http.request_timeout',
  // The quota tracker's write batching is set when the credentials open.
  'server.operations.batch_processing',
  // The management key guard takes its lockout policy when the control plane is built.
  'remote-management.max-failures',
  'remote-management.lockout-duration',
  // The websocket server's payload cap, its ping timer and each socket's high-water mark are set once;
  // max_in_flight is read per request and applies at once.
  'server.websocket.max_message_size',
  'server.websocket.ping_interval',
  'server.websocket.high_water_mark',
  // The usage recorder, its store and its metrics are built once; `usage.retention` is read at each prune.
  'usage.enabled',
  'usage.flush_interval',
  'usage.metrics',
  // Providers without an `oauth` block declare no flow, so adding or removing one of them changes nothing here.
  'providers.*.oauth',
];

type ConfigNode = Record<string, unknown>;

const isNode = (value: unknown): value is ConfigNode => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value at a dotted config path; at `*`, an object of each key's value (keys sorted, absent values left out). */
export function valueAt(config: unknown, path: string): unknown {
  const [key, ...rest] = path.split('.');
  if (key === undefined || !isNode(config)) return undefined;
  const next = (child: unknown) => (rest.length === 0 ? child : valueAt(child, rest.join('.')));
  if (key !== '*') return next(config[key]);
  const entries = Object.keys(config)
    .sort()
    .map((name) => [name, next(config[name])] as const)
    .filter(([, value]) => value !== undefined);
  return Object.fromEntries(entries);
}

/** Sets `path` of `target` to its value in `source` (removing it where `source` has none). */
function copyAt(target: ConfigNode, source: unknown, path: readonly string[]): void {
  const [key, ...rest] = path;
  if (key === undefined) return;
  for (const name of key === '*' ? Object.keys(target) : [key]) {
    const from = isNode(source) ? source[name] : undefined;
    const child = target[name];
    if (rest.length > 0) {
      if (isNode(child)) copyAt(child, from, rest);
    } else if (from === undefined) delete target[name];
    else target[name] = structuredClone(from);
  }
}

/**
 * The paths read at start whose value in `next` differs from the one the process started with:
 * measured against the start, not the previous reload, so a pending restart stays reported
 * through later reloads, and a change undone needs none.
 */
export function pathsNeedingRestart(start: GatewayConfig, next: GatewayConfig): string[] {
  return READ_AT_START.filter((path) => JSON.stringify(valueAt(start, path)) !== JSON.stringify(valueAt(next, path)));
}

/**
 * `next` as the process runs it: each path that waits for a restart keeps its value in `start`.
 *
 * @example
 * ```ts
 * const { config, restartNeeded } = runningConfig(startConfig, gateway.config());
 * ```
 */
export function runningConfig(start: GatewayConfig, next: GatewayConfig): { config: GatewayConfig; restartNeeded: string[] } {
  const restartNeeded = pathsNeedingRestart(start, next);
  const running = structuredClone(next);
  for (const path of restartNeeded) copyAt(running as unknown as ConfigNode, start, path.split('.'));
  return { config: running, restartNeeded };
}
