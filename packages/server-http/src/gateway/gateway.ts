/**
 * @module gateway
 * The reference gateway: composes the libraries into one process. One
 * node:http server carries both planes (the `/v1/*` data plane on plain
 * node:http, everything else on Hono), metrics listen on their own port,
 * and a config change applies without a restart. The gateway decides
 * nothing itself: the relay routes, the cooldown manager cools, the health
 * monitor checks, and this module wires them and translates.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { CooldownManager, type HealingAction, HealthMonitor, SelfHealer } from '@switchyard/core-routing';
import { type AuthFlow, createHttpClient } from '@switchyard/credentials';
import { type AccessPolicy, continueWhenBodyIsRead, isLoopbackHost, openLoopbackWarning, UnsafeBindError } from '@switchyard/http-kit';
import type { UsageStore } from '@switchyard/observability';
import { createObservability, type Observability } from '@switchyard/observability';
import type { DestinationStream } from '@switchyard/observability/logging';
import { openLogDestination } from '@switchyard/observability/logging';
import type { Tracing } from '@switchyard/observability/tracing';
import { NodeFailover, Relay, ResponseCache, UndiciTransport } from '@switchyard/relay';
import { type Scheduler, systemScheduler, Teardown } from '@switchyard/runtime';
import { Agent } from 'undici';
import { ClientKeyGuard } from '../clientKeys/clientKeyGuard.js';
import { CLIENT_KEYS_FILE, FileClientKeyStore } from '../clientKeys/fileClientKeyStore.js';
import type { LookupFunction } from '../controlPlane/ssrf.js';
import { createDataPlane, type DataPlane, type DataPlaneAccess } from '../dataPlane/dataPlane.js';
import { serveWithoutUpgrade } from '../dataPlane/serveWithoutUpgrade.js';
import { isWebsocketUpgrade } from '../dataPlane/websocket/upgradeGate.js';
import { createWebsocketGateway, type WebsocketGateway } from '../dataPlane/websocket/websocketGateway.js';
import { accessPolicyFor, checkBind, hasClientKeys } from './bindRules.js';
import { GatewayCluster } from './cluster.js';
import { changedOutboundUrls } from './config/outboundUrls.js';
import type { GatewayConfig } from './config/schema.js';
import { ConfigFile } from './configFile.js';
import { createControlPlane, createGatewayManagement, type GatewayManagement } from './controlPlane.js';
import { GatewayCredentials, resolveAuthDir } from './credentials.js';
import { FileGuardedHostStore } from './guardedHostStore.js';
import { GuardedHosts } from './guardedHosts.js';
import { healingActions } from './healingActions.js';
import { hostPort, listen } from './listen.js';
import { LogTail } from './logTail.js';
import { openTracing } from './openTracing.js';
import type { GatewayParts } from './parts.js';
import { ProviderStatsCollector } from './providerStats.js';
import { cooldownDurations, createHealthProbe, monitoredProviders, quotaExceededSettings, relayProviders } from './providers.js';
import { pathsNeedingRestart, runningConfig } from './readAtStart.js';
import { cacheSettings, failoverSettings, healingSettings, healthSettings, poolSettings, websocketSettings } from './settings.js';
import { GatewayUsage, openUsageStore } from './usage/gatewayUsage.js';

/** Options of {@link Gateway.start}. */
export interface GatewayOptions {
  config: GatewayConfig;
  /** The file the config came from: watched for changes, and written by `PUT /v0/management/config.yaml`. */
  configPath?: string;
  /** Allow binding a non-loopback host with no client API keys. */
  insecure?: boolean;
  scheduler?: Scheduler;
  /** Log destination overriding `logging.output` (tests, embedding). */
  logDestination?: DestinationStream;
  /** Sign-in and refresh flows besides the two presets (embedders with their own OAuth providers). */
  flows?: readonly AuthFlow[];
  /**
   * The DNS resolver behind every outbound connection the gateway opens (relay, health checks,
   * failover, sign-ins and refreshes, notifications, traces, quota snapshots) and the management
   * API's SSRF checks (default `dns.lookup`); tests inject one to stage DNS rebinding.
   */
  resolve?: LookupFunction;
}

/** The file in `auth-dir` where a gateway outside a cluster keeps the hosts the management API admitted. */
export const GUARDED_HOSTS_FILE = '.guarded-hosts.json';

// The shared HTTP kit's, re-exported where embedders have always imported them from.
export { isLoopbackHost, UnsafeBindError };

/** A `secret-key` shorter than this is warned of at start: it guards credentials and the config. */
export const MIN_SECRET_KEY_LENGTH = 32;

/** How often, at most, the warning about an untrusted forwarding peer is logged. */
const FORWARD_WARNING_INTERVAL_MS = 60_000;

/** A request's path without its query. */
function pathOf(req: IncomingMessage): string {
  return (req.url ?? '/').split('?', 1)[0] ?? '/';
}

/** How long an idle client connection stays open (Node's default, 5 s, races clients' own idle timeouts). */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** How often the server looks for requests past their timeout: a quarter of it, so one lasts at most 1.25 times it (30 s at most, Node's default). */
function connectionsCheckingInterval(requestTimeoutMs: number): number {
  return Math.min(30_000, Math.max(25, Math.floor(requestTimeoutMs / 4)));
}

/**
 * A running gateway.
 *
 * @example
 * ```ts
 * const gateway = await Gateway.start({ config: await loadConfigFile('config.yaml'), configPath: 'config.yaml' });
 * console.log(`listening on ${gateway.url}`);
 * ```
 */
export class Gateway implements GatewayParts {
  readonly relay: Relay;
  readonly cooldowns: CooldownManager;
  readonly health: HealthMonitor;
  readonly healer: SelfHealer;
  readonly cache: ResponseCache;
  readonly transport: UndiciTransport;
  readonly failover: NodeFailover;
  readonly observability: Observability;
  readonly logTail: LogTail;
  readonly dataPlane: DataPlane;
  /** `/v1/ws` and `/v1/responses` upgrades. */
  readonly websocket: WebsocketGateway;
  /** The management key rules, shared by the control plane and the websocket routes. */
  readonly management: GatewayManagement;
  /** Hosts set through the management API, held to the SSRF guard at every connection (DNS rebinding). */
  readonly guardedHosts: GuardedHosts;
  readonly stats: ProviderStatsCollector;
  readonly scheduler: Scheduler;
  /** The credential store, pools, refresh worker and sign-in flows. */
  readonly credentials: GatewayCredentials;
  /** The shared PostgreSQL stores (`cluster.enabled`), else undefined. */
  readonly cluster: GatewayCluster | undefined;
  /** Runtime client keys (`/v0/management/client-keys`) and their limits. */
  readonly clientKeys: ClientKeyGuard;
  /** Usage accounting by client key, tenant, provider and model (`usage.enabled`), else undefined. */
  readonly usage: GatewayUsage | undefined;
  readonly startedAt: number;
  readonly configPath: string | undefined;
  readonly server: Server;
  private current: GatewayConfig;
  /** The config this process started with: what the keys read at start still hold. */
  private readonly startConfig: GatewayConfig;
  private detach: (() => void) | undefined;
  /** Stops passing quota changes to the routing table. */
  private readonly stopQuotaFeed: () => void;
  /** The config file (`configPath`), watched and applied as it changes. */
  private readonly configFile: ConfigFile | undefined;
  private url_ = '';
  /** `--insecure`: a public bind may go without api-keys, at start and at every reload. */
  private readonly insecure: boolean;
  /** The access rules of the config in force. */
  private access_: AccessPolicy;
  private lastForwardWarning = Number.NEGATIVE_INFINITY;
  private stopConfigSignal: (() => void) | undefined;
  /** The OpenTelemetry tracer (`tracing.enabled`), flushed and stopped on close. */
  private readonly tracing: Tracing | undefined;
  /** What the self-healer may do for an unhealthy provider (healingActions.ts). */
  private readonly healingActions: HealingAction[];
  /** The pool of the gateway's own HTTP calls (sign-ins and refreshes, chat and pager notifications), guarded like the relay's. */
  private readonly outbound: Agent;

  private constructor(
    options: GatewayOptions,
    credentials: GatewayCredentials,
    cluster: GatewayCluster | undefined,
    tracer: Tracing | undefined,
    guarded: { hosts: GuardedHosts; outbound: Agent; clientKeys: ClientKeyGuard },
    usageStore: UsageStore | undefined,
  ) {
    const config = options.config;
    this.current = config;
    this.startConfig = config;
    this.insecure = options.insecure === true;
    const access = accessPolicyFor(config, config.host, this.insecure);
    this.access_ = access.policy;
    this.credentials = credentials;
    this.cluster = cluster;
    this.clientKeys = guarded.clientKeys;
    this.configPath = options.configPath;
    this.configFile =
      options.configPath === undefined
        ? undefined
        : new ConfigFile({
            path: options.configPath,
            knownKinds: () => this.relay.adapterKinds(),
            apply: (next, how) => this.reload(next, how),
            // Another node may have written the file: learn the hosts the API admitted there before applying it.
            ...(cluster ? { beforeApply: (next: GatewayConfig) => this.guardedHosts.refresh(next) } : {}),
            logError: (fields, message) => this.observability.logger.error(fields, message),
          });
    this.scheduler = options.scheduler ?? systemScheduler;
    this.startedAt = this.scheduler.now();
    this.tracing = tracer;
    this.guardedHosts = guarded.hosts;
    this.outbound = guarded.outbound;
    const ops = config.server.operations;
    this.logTail = new LogTail(options.logDestination ?? openLogDestination(config.logging, { clock: this.scheduler }));
    const { metrics, logging, tracing, alerts, notifications } = config;
    this.observability = createObservability(
      { metrics, logging, tracing, alerts, notifications },
      {
        scheduler: this.scheduler,
        knownProviders: Object.keys(config.providers),
        knownModels: Object.values(config.providers).flatMap((p) => p.models.filter((m) => !/[*?]/.test(m))),
        // Read per request: a reload's prices apply at once.
        tokenPrice: (provider) => this.current.providers[provider]?.cost_per_1k_tokens,
        logDestination: this.logTail,
        ...(tracer ? { tracing: tracer.gateway } : {}),
        httpDispatcher: this.outbound,
        smtpLookup: this.guardedHosts.lookup,
      },
    );
    // What the store held and this config no longer names was let go while the process was down.
    this.guardedHosts.retain(config);
    const { lookup } = this.guardedHosts;
    this.transport = new UndiciTransport(poolSettings(config), { lookup });
    this.cache = new ResponseCache(cacheSettings(config));
    this.failover = new NodeFailover(failoverSettings(config), { scheduler: this.scheduler, lookup });

    // The relay is created before the probe needs it, so the probe reads it lazily.
    let relay: Relay | undefined;
    const probe = createHealthProbe({
      config: () => this.current,
      adapter: (kind) => relay?.adapter(kind),
      transport: this.transport,
      credential: (provider) => credentials.probeCredential(provider),
    });
    this.health = new HealthMonitor({
      scheduler: this.scheduler,
      providers: monitoredProviders(config),
      probe,
      settings: healthSettings(config),
      // The cooldown manager is built next (its recovery check needs this monitor), so it is read lazily.
      cooldowns: { isCooling: (key) => this.cooldowns.isCooling(key) },
    });
    this.cooldowns = new CooldownManager({
      scheduler: this.scheduler,
      // In a cluster, cooldowns live in PostgreSQL: one node's 429s cool the provider on every node.
      ...(cluster ? { store: cluster.cooldownStore } : {}),
      detection: { enabled: ops.cooldown.enabled, windowMs: ops.cooldown.detection_window, errorThreshold: ops.cooldown.error_threshold },
      durations: cooldownDurations(config),
      healthCheck: (key) => this.recoveryCheck(key),
    });
    this.healingActions = healingActions({
      config: () => this.current,
      relay: () => this.relay,
      transport: this.transport,
      refreshCredentials: () => this.credentials.manager.checkRefresh(),
    });
    this.healer = new SelfHealer({
      health: this.health,
      scheduler: this.scheduler,
      actions: this.healingActions,
      settings: healingSettings(config),
    });
    relay = new Relay({
      providers: relayProviders(config),
      strategy: ops.load_balancing.strategy,
      latencyWindowMs: ops.load_balancing.latency_window,
      transport: this.transport,
      credentials: credentials.relayPools(),
      cooldowns: this.cooldowns,
      health: this.health,
      cache: this.cache,
      failover: this.failover,
      maxAttempts: ops.retry.max_attempts,
      quotaExceeded: quotaExceededSettings(config),
      clock: this.scheduler,
      // Each upstream call carries `traceparent` naming its attempt's span, so a traced provider continues the trace.
      ...(tracer
        ? { upstreamHeaders: (requestId, provider, attempt) => tracer.gateway.upstreamHeaders(requestId, provider, attempt) }
        : {}),
    });
    this.relay = relay;
    this.usage = usageStore
      ? new GatewayUsage({
          store: usageStore,
          scheduler: this.scheduler,
          config: () => this.current,
          registry: this.observability.registry,
          logger: this.observability.logger,
        })
      : undefined;
    this.stopQuotaFeed = credentials.feedQuota(relay.table, () => Object.keys(this.current.providers));
    this.stats = new ProviderStatsCollector(this.scheduler);
    relay.events.on('request:end', (event) => this.stats.record(event));
    relay.events.on('decision', (event) => this.stats.recordDecision(event));
    this.dataPlane = createDataPlane({
      relay,
      apiKeys: config['api-keys'],
      clientKeys: this.clientKeys,
      access: this.dataPlaneAccess(access),
      providerStats: () => this.providerStats(),
      // A request arriving with a sampled `traceparent` continues the client's trace.
      ...(tracer ? { onRelayRequest: (requestId, headers) => tracer.gateway.continueFrom(requestId, headers) } : {}),
    });
    this.management = createGatewayManagement(() => this.current, this.scheduler, {
      access: () => this.access_,
      onUntrustedForward: (peer) => this.warnUntrustedForward(peer),
    });
    this.websocket = createWebsocketGateway({
      relay,
      acceptsClientKey: (key) => this.dataPlane.acceptsClientKey(key),
      clientOf: (key) => this.dataPlane.clientOf(key),
      clientKeys: this.clientKeys,
      accessDenial: (req, denialOptions) => this.dataPlane.accessDenial(req, denialOptions),
      management: this.management.guard,
      credentials: credentials.manager,
      settings: () => websocketSettings(this.current),
      scheduler: this.scheduler,
      logError: (fields, message) => this.observability.logger.error(fields, message),
    });
    const app = createControlPlane(this, this.management);
    const hono = getRequestListener(app.fetch);
    const dispatch = async (req: IncomingMessage, res: ServerResponse) => {
      try {
        if (await this.dataPlane.handle(req, res)) return;
        await hono(req, res);
      } catch (error) {
        // The path only: a query can carry the client's key (Gemini's `?key=`).
        this.observability.logger.error({ err: error, path: pathOf(req) }, 'request_handler_failed');
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'internal', message: 'internal error' } }));
      }
    };
    const http = config.server.http;
    // Node checks for timed-out requests only every `connectionsCheckingInterval` (30 s by default),
    // which would let a request outlive a short timeout by that much.
    this.server = createServer({ connectionsCheckingInterval: connectionsCheckingInterval(http.request_timeout) }, dispatch);
    this.server.requestTimeout = http.request_timeout;
    this.server.maxConnections = http.max_connections;
    // A client sending `Expect: 100-continue` uploads only after the 100, which goes out when a
    // plane starts reading the body: a wrong key, path, method or media type, or a declared length
    // over a cap, is answered first, so the client never uploads a body that would be refused.
    continueWhenBodyIsRead(this.server);
    // Keep idle client connections longer than clients keep them (undici 4 s,
    // most SDKs and load balancers up to 60 s), so a client never sends a
    // request on a socket the gateway is closing at that moment (ECONNRESET).
    this.server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    // The request timeout, when shorter, bounds the headers too.
    this.server.headersTimeout = Math.min(KEEP_ALIVE_TIMEOUT_MS + 1000, http.request_timeout);
    // Websocket is the one upgrade taken; any other (h2c from `curl --http2`) is answered over HTTP/1.1.
    this.server.on('upgrade', (req, socket, head) => {
      if (isWebsocketUpgrade(req)) this.websocket.handleUpgrade(req, socket, head);
      else serveWithoutUpgrade(this.server, req, socket, head);
    });
  }

  /** Builds, starts and binds a gateway. */
  static async start(options: GatewayOptions): Promise<Gateway> {
    const { config } = options;
    const insecure = options.insecure === true;
    const scheduler = options.scheduler ?? systemScheduler;
    // What start-up has opened so far, closed newest first if a later step fails.
    const undo = new Teardown();
    let gateway: Gateway | undefined;
    let cluster: GatewayCluster | undefined;
    let credentials: GatewayCredentials;
    try {
      cluster = config.cluster.enabled ? await GatewayCluster.open(config, { clock: scheduler }) : undefined;
      if (cluster) undo.push(() => cluster?.close());
      // Apart from the credentials: a cluster's table, else `auth-dir/.client-keys.json`.
      const fileKeys = cluster
        ? undefined
        : await FileClientKeyStore.open(join(resolveAuthDir(config['auth-dir'], options.configPath), CLIENT_KEYS_FILE), {
            clock: scheduler,
          });
      const clientKeys = await ClientKeyGuard.open({
        store: cluster?.clientKeyStore ?? fileKeys!,
        ledger: cluster?.clientKeyStore ?? fileKeys!.ledger,
        clock: scheduler,
        scheduler,
        // Read at each settlement: a reload's prices apply at once, as in svc_cost_total.
        tokenPrice: (provider) => (gateway?.config() ?? config).providers[provider]?.cost_per_1k_tokens,
        onError: (error) => gateway?.observability.logger.warn({ err: error.message }, 'client_keys_store_failed'),
      });
      undo.push(() => clientKeys.close());
      // The bind rule, once the runtime client keys are known and before anything connects out or listens.
      checkBind(config.host, config, insecure, clientKeys.size);
      // Before anything connects (the credentials' first refresh pass included): the hosts the API set before this
      // start stay guarded (an unreadable file refuses the start).
      const store =
        cluster?.guardedHostStore ??
        new FileGuardedHostStore(join(resolveAuthDir(config['auth-dir'], options.configPath), GUARDED_HOSTS_FILE));
      const guardedHosts = new GuardedHosts({
        // The allow-list in force: the start config's until the gateway runs, then the running config's.
        policy: () => ({ allow: (gateway?.current ?? config)['remote-management']['api-call-allow'] }),
        ...(options.resolve ? { resolve: options.resolve } : {}),
        store,
        hosts: await store.load(),
        onStoreError: (error) => gateway?.observability.logger.warn({ err: error.message }, 'guarded_hosts_store_failed'),
      });
      const outbound = new Agent({ connect: { lookup: guardedHosts.lookup } });
      undo.push(() => outbound.close());
      credentials = await GatewayCredentials.open(config, {
        scheduler,
        configPath: options.configPath,
        http: createHttpClient({ dispatcher: outbound }),
        ...(options.flows ? { flows: options.flows } : {}),
        ...(cluster ? { stores: cluster.credentialStores(), nodeId: cluster.nodeId } : {}),
      });
      const opened = credentials;
      undo.push(() => opened.close());
      const tracing = await openTracing(config, scheduler, guardedHosts.lookup);
      if (tracing) undo.push(() => tracing.shutdown());
      const usageStore = config.usage.enabled ? await openUsageStore(config, options.configPath, cluster) : undefined;
      if (usageStore) undo.push(() => usageStore.close());
      gateway = new Gateway(
        { ...options, scheduler },
        credentials,
        cluster,
        tracing,
        { hosts: guardedHosts, outbound, clientKeys },
        usageStore,
      );
    } catch (error) {
      await undo.run();
      throw error;
    }
    // From here the gateway owns what the undo stack held: a failure (the port in use, the metrics
    // port in use) closes the whole of it, timers and stores included, before the start rejects.
    try {
      if (cluster) {
        cluster.useLogger(gateway.observability.logger);
        cluster.useAdmissionCounts(() => credentials.manager.quotaAdmissions());
        if (gateway.observability.registry) cluster.registerMetrics(gateway.observability.registry);
      }
      gateway.detach = gateway.observability.observeGateway({
        relay: gateway.relay.events,
        cooldowns: gateway.cooldowns.events,
        health: gateway.health.events,
        healer: gateway.healer.events,
        credentials: credentials.manager.events,
        websocket: gateway.websocket.events,
      });
      gateway.usage?.start(gateway.relay.events);
      await listen(gateway.server, config.port, config.host);
      const { port } = gateway.server.address() as AddressInfo;
      gateway.url_ = `http://${hostPort(config.host, port)}`;
      await gateway.observability.start();
      gateway.cooldowns.start();
      gateway.health.start();
      gateway.healer.start();
      gateway.failover.start();
      await gateway.configFile?.watch();
      if (cluster) {
        // Another node's config changed: a signal to re-read our own file, never its content.
        gateway.stopConfigSignal = cluster.onConfigReload((event) => {
          gateway.observability.logger.info({ event_id: event.event_id, from: event.origin.node_id }, 'cluster_config_reload_signal');
          // The sender's API may have admitted a host our running config already names: guard it now, file changed or not.
          void gateway.guardedHosts
            .refresh(gateway.config())
            .catch((error: Error) => gateway.observability.logger.warn({ err: error.message }, 'guarded_hosts_refresh_failed'))
            .then(() => gateway.configFile?.applyIfChanged({ signalled: true }));
        });
      }
    } catch (error) {
      await gateway.close().catch(() => undefined);
      throw error;
    }
    gateway.observability.logger.info({ url: gateway.url_, providers: Object.keys(config.providers) }, 'gateway_started');
    const open = openLoopbackWarning({ host: config.host, hasKeys: hasClientKeys(config, gateway.clientKeys.size), server: 'the gateway' });
    if (open) gateway.observability.logger.warn({ host: config.host, hint: open }, 'gateway_without_api_keys');
    const secret = config['remote-management']['secret-key'];
    if (secret.length > 0 && secret.length < MIN_SECRET_KEY_LENGTH) {
      gateway.observability.logger.warn(
        {
          length: secret.length,
          minimum: MIN_SECRET_KEY_LENGTH,
          hint: `remote-management.secret-key guards the credentials and the config: use at least ${MIN_SECRET_KEY_LENGTH} random characters (openssl rand -base64 32)`,
        },
        'management_secret_key_short',
      );
    }
    return gateway;
  }

  /** Base URL the gateway listens on. */
  get url(): string {
    return this.url_;
  }

  /** The config in force. */
  config(): GatewayConfig {
    return this.current;
  }

  /** The access rules in force: Host allowlist, Origins, trusted proxies (the data plane's and the dashboard's). */
  get access(): AccessPolicy {
    return this.access_;
  }

  /**
   * The bind rule a new config must keep, as at start: on a host others can reach (the bound one, or the one the
   * config names for the next start), `api-keys` may not be empty unless the gateway was started `--insecure`.
   * Returns the refusal, or undefined.
   */
  bindRefusal(config: GatewayConfig): UnsafeBindError | undefined {
    try {
      checkBind(this.startConfig.host, config, this.insecure, this.clientKeys.size);
      checkBind(config.host, config, this.insecure, this.clientKeys.size);
      return undefined;
    } catch (error) {
      if (error instanceof UnsafeBindError) return error;
      throw error;
    }
  }

  private dataPlaneAccess(access: { policy: AccessPolicy; remoteCallers: boolean }): DataPlaneAccess {
    return { ...access, onUntrustedForward: (peer) => this.warnUntrustedForward(peer ?? '') };
  }

  /** A reverse proxy on this host that is not trusted: said in the log, once a minute at most (any client can send the headers). */
  private warnUntrustedForward(peer: string): void {
    const now = this.scheduler.now();
    if (now - this.lastForwardWarning < FORWARD_WARNING_INTERVAL_MS) return;
    this.lastForwardWarning = now;
    this.observability.logger.warn(
      {
        peer,
        trusted_proxies: this.current['remote-management']['trusted-proxies'],
        hint: 'a loopback peer sent X-Forwarded-For, Forwarded or X-Real-IP without being in remote-management.trusted-proxies, so its callers are treated as remote; add the proxy there if it is yours',
      },
      'forwarded_headers_from_untrusted_peer',
    );
  }

  /**
   * The config as it runs: the config in force ({@link config}), except that each path read only
   * at start keeps the value the process started with. `restartNeeded` lists the paths whose value
   * in the config in force waits for a restart. Given a `candidate`, it says the same of that
   * config as if it were applied (a dry run of a reload).
   */
  runningConfig(candidate: GatewayConfig = this.current): { config: GatewayConfig; restartNeeded: string[] } {
    return runningConfig(this.startConfig, candidate);
  }

  /** Live per-provider traffic (`GET /v1/metrics/providers`, the dashboard's charts). */
  providerStats() {
    return this.stats.report(Object.keys(this.current.providers));
  }

  /**
   * Applies a new config to the running gateway. Everything routing-related
   * takes effect for the next request; requests in flight finish on what
   * they started with. Keys read only at start (`host`, `port`,
   * `metrics.*`, `auth-dir`, …) whose new value differs from the one this
   * process started with are reported in the result: measured against the
   * start, not the previous reload, so a pending restart stays reported
   * through later reloads, and a change undone needs none. `viaApi` says
   * the config passed the management API's SSRF check: the hosts of the
   * destinations it adds or changes stay held to the guard at every
   * connection (see `GuardedHosts` in gateway/guardedHosts.ts). Their record in the store is
   * written in the background here; the management route records them,
   * and waits for it, before it writes the config file.
   */
  reload(
    config: GatewayConfig,
    options: { fromFile?: string; announce?: boolean; requestId?: string; viaApi?: boolean } = {},
  ): { restartNeeded: string[] } {
    // The rule of the start holds at every reload: emptying api-keys must not publish /v1 (UnsafeBindError).
    const refusal = this.bindRefusal(config);
    if (refusal) throw refusal;
    if (options.fromFile !== undefined) this.configFile?.applied(options.fromFile);
    // Before anything can connect to them under the new config. The management route has recorded them already;
    // an embedder's call records them here, and a failure to is logged (they are guarded in this process regardless).
    if (options.viaApi) {
      this.guardedHosts.admit(changedOutboundUrls(config, this.current)).catch((error: Error) => {
        this.observability.logger.warn({ err: error.message }, 'guarded_hosts_store_failed');
      });
    }
    this.guardedHosts.retain(config);
    const ops = config.server.operations;
    this.current = config;
    this.transport.reconfigure(poolSettings(config));
    this.cache.configure(cacheSettings(config));
    this.cooldowns.configure({
      detection: { enabled: ops.cooldown.enabled, windowMs: ops.cooldown.detection_window, errorThreshold: ops.cooldown.error_threshold },
      durations: cooldownDurations(config),
    });
    this.health.setProviders(monitoredProviders(config));
    this.health.configure(healthSettings(config));
    this.healer.configure(healingSettings(config), this.healingActions);
    this.failover.configure(failoverSettings(config));
    this.relay.configure({
      providers: relayProviders(config),
      strategy: ops.load_balancing.strategy,
      maxAttempts: ops.retry.max_attempts,
      quotaExceeded: quotaExceededSettings(config),
    });
    this.dataPlane.setApiKeys(config['api-keys']);
    const access = accessPolicyFor(config, this.startConfig.host, this.insecure);
    this.access_ = access.policy;
    this.dataPlane.setAccess(this.dataPlaneAccess(access));
    // Connections beyond a lowered cap stay open; new ones wait until the count falls below it.
    this.server.maxConnections = config.server.http.max_connections;
    this.websocket.revalidate();
    this.credentials.configure(config);
    // Provider limits may have changed: the table takes every provider's remaining quota again.
    this.credentials.syncQuota(this.relay.table, Object.keys(config.providers));
    this.observability.alerts?.setRules(config.alerts.rules);
    this.observability.logger.level = config.logging.level;
    const restartNeeded = pathsNeedingRestart(this.startConfig, config);
    this.observability.logger.info({ restart_needed: restartNeeded }, 'config_reloaded');
    if (this.cluster && options.announce !== false) {
      const correlation = { request_id: options.requestId ?? null, actor: 'config', reason: 'config reload' };
      this.cluster.publishConfigReload(correlation).catch((error: Error) => {
        this.observability.logger.warn({ err: error.message }, 'cluster_config_reload_signal_failed');
      });
    }
    return { restartNeeded };
  }

  /**
   * Stops everything, letting HTTP requests in flight finish first; websockets are closed (1001)
   * and their requests aborted. Calling it again returns the same promise (a signal handler and
   * an embedder's teardown may both call it).
   */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private closing: Promise<void> | undefined;

  private async shutDown(): Promise<void> {
    await this.configFile?.close();
    this.stopConfigSignal?.();
    this.healer.stop();
    this.health.stop();
    this.cooldowns.stop();
    // Sockets first: upgraded connections would otherwise hold server.close() open.
    await this.websocket.close();
    this.relay.close();
    this.stopQuotaFeed();
    this.detach?.();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
    });
    await this.failover.close();
    await this.transport.close();
    await this.credentials.close();
    await this.clientKeys.close().catch((error: Error) => {
      this.observability.logger.warn({ err: error.message }, 'client_keys_store_failed');
    });
    // After the server and the relay: every request's end has been counted. Before the cluster's pool ends.
    await this.usage?.close();
    await this.cluster?.close();
    await this.observability.stop();
    // Spans still queued in the batch processor are exported before the process goes.
    await this.tracing?.shutdown().catch((error: Error) => {
      this.observability.logger.warn({ err: error.message }, 'tracing_shutdown_failed');
    });
    // Last: the credentials and the notifiers, which call through it, have stopped.
    await this.outbound.close();
  }

  /** A cooling provider may return once its health endpoint answers (or at once when it is not checked). */
  private async recoveryCheck(key: string): Promise<boolean> {
    if (!this.health.providers.includes(key)) return true;
    const result = await this.health.checkNow(key);
    return result.ok;
  }
}
