/**
 * @module failover
 * Node-level failover (`server.failover.*`), for gateways run as several
 * nodes:
 *
 * - `active_passive`: when none of this node's providers can take a request
 *   (all cooling down or unhealthy), the request goes to `backup_url`,
 *   another gateway, within `failover_timeout`.
 * - `active_active`: every node knows its peers; a consistent-hash ring
 *   gives each request an owner (by its affinity key), and a request that
 *   lands on another node is forwarded to its owner. A peer that cannot be
 *   reached is dropped from the ring and checked every
 *   `health_check_interval` until it answers again.
 *
 * A forwarded request carries `x-switchyard-forwarded`, and a node never
 * forwards such a request again, so two nodes cannot bounce it.
 */
import type { LookupFunction } from 'node:net';
import { ConsistentHashRing } from '@switchyard/core-routing';
import { every, type Scheduler, systemScheduler } from '@switchyard/runtime';
import { Agent } from 'undici';
import type { ResponseSink } from './sink.js';
import type { RelayRequest } from './types.js';

/** `server.failover.*`. */
export interface FailoverSettings {
  mode: 'none' | 'active_passive' | 'active_active';
  /** active_passive: the backup gateway's base URL (`http://backup:8317`). */
  backupUrl?: string | undefined;
  /** Time allowed to a forwarded request before its first byte (default 30 s). */
  failoverTimeoutMs?: number;
  /** How often unreachable peers are checked again (default 10 s). */
  healthCheckIntervalMs?: number;
  /** active_active: the other nodes' base URLs. */
  peers?: readonly string[];
  /** active_active: this node's own base URL, as its peers know it. */
  selfUrl?: string | undefined;
}

/** Header marking a request one node forwarded to another. */
export const FORWARDED_HEADER = 'x-switchyard-forwarded';
/** Header naming the node that answered. */
export const SERVED_BY_HEADER = 'x-switchyard-served-by';
/** Header a client may set to keep related requests on one node. */
export const AFFINITY_HEADER = 'x-switchyard-affinity';

/** Outcome of a forward: the other node answered (with this status), or could not be reached. */
export type ForwardOutcome = { kind: 'answered'; status: number } | { kind: 'unreachable' };

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/**
 * Decides where requests go between nodes, and carries them there.
 *
 * @example
 * ```ts
 * const failover = new NodeFailover({ mode: 'active_active', selfUrl: 'http://a:8317', peers: ['http://b:8317'] });
 * failover.start();
 * ```
 */
export class NodeFailover {
  private settings: Required<Omit<FailoverSettings, 'backupUrl' | 'selfUrl'>> & { backupUrl?: string; selfUrl?: string };
  private readonly scheduler: Scheduler;
  private readonly agent: Agent;
  private ring = new ConsistentHashRing();
  private readonly dead = new Set<string>();
  private stopChecks: (() => void) | undefined;

  /**
   * `options.lookup` resolves the host of each new connection to a node (default `dns.lookup`); the
   * gateway passes the same SSRF-guarding lookup as to its `UndiciTransport`.
   */
  constructor(settings: FailoverSettings, options: { scheduler?: Scheduler; lookup?: LookupFunction } = {}) {
    this.scheduler = options.scheduler ?? systemScheduler;
    this.agent = new Agent({ keepAliveTimeout: 30_000, ...(options.lookup ? { connect: { lookup: options.lookup } } : {}) });
    this.settings = NodeFailover.resolve(settings);
    this.rebuildRing();
  }

  private static resolve(settings: FailoverSettings) {
    return {
      mode: settings.mode,
      failoverTimeoutMs: settings.failoverTimeoutMs ?? 30_000,
      healthCheckIntervalMs: settings.healthCheckIntervalMs ?? 10_000,
      peers: (settings.peers ?? []).map(trimSlash),
      ...(settings.backupUrl ? { backupUrl: trimSlash(settings.backupUrl) } : {}),
      ...(settings.selfUrl ? { selfUrl: trimSlash(settings.selfUrl) } : {}),
    };
  }

  /** Applies new settings (config reload). */
  configure(settings: FailoverSettings): void {
    this.settings = NodeFailover.resolve(settings);
    for (const peer of [...this.dead]) if (!this.settings.peers.includes(peer)) this.dead.delete(peer);
    this.rebuildRing();
  }

  get mode(): FailoverSettings['mode'] {
    return this.settings.mode;
  }

  /** The nodes on the ring now (live peers and this node). */
  ringNodes(): string[] {
    return this.ring.nodes();
  }

  /** Peers currently held out of the ring as unreachable. */
  deadPeers(): string[] {
    return [...this.dead];
  }

  private rebuildRing(): void {
    const nodes = this.settings.peers.filter((p) => !this.dead.has(p));
    if (this.settings.selfUrl) nodes.push(this.settings.selfUrl);
    this.ring = new ConsistentHashRing([...new Set(nodes)]);
  }

  /** The key that places a request on the ring: the affinity header, else the body's `user`, else the model. */
  static affinityKey(request: RelayRequest): string {
    if (request.affinity) return request.affinity;
    const user = request.body.user;
    return typeof user === 'string' && user.length > 0 ? `user:${user}` : `model:${request.model}`;
  }

  /** active_active: the peer that owns `key`, or undefined when this node does (or the request was already forwarded). */
  ownerElsewhere(key: string, alreadyForwarded: boolean): string | undefined {
    if (this.settings.mode !== 'active_active' || alreadyForwarded || !this.settings.selfUrl) return undefined;
    const owner = this.ring.get(key);
    return owner === undefined || owner === this.settings.selfUrl ? undefined : owner;
  }

  /** active_passive: where to send a request this node cannot serve, if anywhere. */
  backupFor(alreadyForwarded: boolean): string | undefined {
    if (this.settings.mode !== 'active_passive' || alreadyForwarded) return undefined;
    return this.settings.backupUrl;
  }

  /**
   * Sends the request to another node and writes its answer to `sink`.
   * 'unreachable' means nothing reached the client, so the caller can still
   * answer; an unreachable peer leaves the ring until it answers a check.
   */
  async forward(target: string, request: RelayRequest, sink: ResponseSink): Promise<ForwardOutcome> {
    const url = new URL(`${target}${request.path ?? '/v1/chat/completions'}`);
    const controller = new AbortController();
    const timer = this.scheduler.setTimeout(() => controller.abort(), this.settings.failoverTimeoutMs);
    const onClientAbort = () => controller.abort();
    request.signal?.addEventListener('abort', onClientAbort, { once: true });
    try {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        [FORWARDED_HEADER]: this.settings.selfUrl ?? 'switchyard',
        'x-request-id': request.requestId,
      };
      // Nodes of one gateway share their client keys, so the client's own key authenticates the hop.
      if (request.clientAuthorization) headers.authorization = request.clientAuthorization;
      const response = await this.agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers,
        body: request.rawBody,
        signal: controller.signal,
      });
      this.scheduler.clearTimeout(timer);
      const passHeaders: Record<string, string> = {};
      for (const [name, value] of Object.entries(response.headers)) {
        if (value === undefined || ['connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(name)) continue;
        passHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      passHeaders[SERVED_BY_HEADER] ??= target;
      sink.writeHead(response.statusCode, passHeaders);
      try {
        for await (const chunk of response.body) {
          if (sink.closed) break;
          if (!sink.write(chunk)) await sink.drain();
        }
      } finally {
        if (!sink.closed) sink.end();
      }
      return { kind: 'answered', status: response.statusCode };
    } catch {
      this.scheduler.clearTimeout(timer);
      if (sink.headersSent) {
        if (!sink.closed) sink.end();
        return { kind: 'answered', status: 200 };
      }
      this.markDead(target);
      return { kind: 'unreachable' };
    } finally {
      request.signal?.removeEventListener('abort', onClientAbort);
    }
  }

  /** Takes a peer off the ring until it answers a health check. */
  markDead(peer: string): void {
    if (!this.settings.peers.includes(peer) || this.dead.has(peer)) return;
    this.dead.add(peer);
    this.rebuildRing();
  }

  /** Checks unreachable peers (`GET <peer>/health`) and puts back those that answer. */
  async checkPeers(): Promise<void> {
    for (const peer of [...this.dead]) {
      try {
        const response = await this.agent.request({
          origin: new URL(peer).origin,
          path: '/health',
          method: 'GET',
          signal: AbortSignal.timeout(Math.min(this.settings.failoverTimeoutMs, 5_000)),
        });
        await response.body.dump();
        if (response.statusCode < 500) {
          this.dead.delete(peer);
          this.rebuildRing();
        }
      } catch {
        // Still down: checked again next round.
      }
    }
  }

  /** Starts the peer checks. */
  start(): void {
    this.stopChecks ??= every(this.scheduler, this.settings.healthCheckIntervalMs, () => this.checkPeers());
  }

  async close(): Promise<void> {
    this.stopChecks?.();
    this.stopChecks = undefined;
    await this.agent.close();
  }
}
