/**
 * @module routingTable
 * One `Selector` per distinct set of candidate providers (models served by
 * the same providers share one), plus the provider-wide facts every selector
 * must agree on: availability, remaining quota and latency samples. A
 * change to a provider reaches every selector it belongs to.
 */

import { type LoadBalancingStatus, Selector, type StrategyName, type UnavailableReason } from '@switchyard/core-routing';
import type { Clock } from '@switchyard/runtime';
import { ModelRouter, type RouteTarget } from './modelRouter.js';
import type { ProviderConfig } from './types.js';

const ROUTE_CACHE_LIMIT = 1024;

/** A model's route: its candidate providers and the selector that chooses among them. */
export interface Route {
  targets: RouteTarget[];
  /** Upstream model name by provider. */
  upstreamModel: Map<string, string>;
  selector: Selector;
}

/** Why a provider is held out, and until when (for cooldowns). */
type Availability = Map<UnavailableReason, number | undefined>;

/** Options of {@link RoutingTable}. */
export interface RoutingTableOptions {
  strategy?: StrategyName;
  clock?: Clock;
  latencyWindowMs?: number;
}

/** Load-balancing status across every model group. */
export interface RoutingStatus extends LoadBalancingStatus {
  groups: { providers: string[]; status: LoadBalancingStatus }[];
}

/**
 * Routes models to providers and keeps the selectors in step.
 *
 * @example
 * ```ts
 * const table = new RoutingTable(providers, { strategy: 'latency' });
 * const route = table.route('gpt-4o');
 * const provider = route?.selector.select();
 * ```
 */
export class RoutingTable {
  private router: ModelRouter;
  private providers: ProviderConfig[];
  private readonly options: RoutingTableOptions;
  private strategy: StrategyName;
  private readonly selectors = new Map<string, Selector>();
  private readonly availability = new Map<string, Availability>();
  private readonly quota = new Map<string, number | undefined>();
  private lastUsed: Selector | undefined;
  /** Routes by model name, built once per configuration (client-chosen names, so bounded). */
  private readonly routes = new Map<string, Route>();

  constructor(providers: readonly ProviderConfig[], options: RoutingTableOptions = {}) {
    this.options = options;
    this.strategy = options.strategy ?? 'round_robin';
    this.providers = [...providers];
    this.router = new ModelRouter(this.providers);
  }

  /** Applies a new provider list or strategy (hot reload); selectors of unchanged groups keep their state. */
  configure(providers: readonly ProviderConfig[], strategy: StrategyName = this.strategy): void {
    this.providers = [...providers];
    this.router = new ModelRouter(this.providers);
    this.strategy = strategy;
    this.routes.clear();
    const names = new Set(this.providers.filter((p) => p.enabled !== false).map((p) => p.name));
    for (const [key, selector] of this.selectors) {
      const members = key.split('\u0000');
      if (members.some((m) => !names.has(m))) {
        this.selectors.delete(key);
        continue;
      }
      selector.setCandidates(this.specsFor(members));
      selector.setStrategy(strategy);
    }
  }

  /** The route of a model, or undefined when no provider serves it. */
  route(model: string): Route | undefined {
    const known = this.routes.get(model);
    if (known) {
      this.lastUsed = known.selector;
      return known;
    }
    const targets = this.router.route(model);
    if (targets.length === 0) return undefined;
    const names = targets.map((t) => t.provider);
    const key = names.join('\u0000');
    let selector = this.selectors.get(key);
    if (!selector) {
      selector = new Selector(this.specsFor(names), {
        strategy: this.strategy,
        ...(this.options.clock ? { clock: this.options.clock } : {}),
        ...(this.options.latencyWindowMs !== undefined ? { latencyWindowMs: this.options.latencyWindowMs } : {}),
      });
      for (const name of names) {
        for (const [reason, until] of this.availability.get(name) ?? []) selector.markUnavailable(name, reason, until);
        if (this.quota.has(name)) selector.setRemainingQuota(name, this.quota.get(name));
      }
      this.selectors.set(key, selector);
    }
    this.lastUsed = selector;
    const route = { targets, upstreamModel: new Map(targets.map((t) => [t.provider, t.upstreamModel])), selector };
    if (this.routes.size >= ROUTE_CACHE_LIMIT) this.routes.clear();
    this.routes.set(model, route);
    return route;
  }

  /** Every model the providers list. */
  models() {
    return this.router.models();
  }

  /** Provider configuration by name. */
  provider(name: string): ProviderConfig | undefined {
    return this.providers.find((p) => p.name === name);
  }

  /**
   * The configuration of a provider that may take traffic now: configured and enabled. A request
   * keeps the route it started with, so after a reload its candidates can name a provider that
   * was removed or disabled since; this is the check before each attempt.
   */
  servingProvider(name: string): ProviderConfig | undefined {
    const config = this.provider(name);
    return config?.enabled === false ? undefined : config;
  }

  /** Holds a provider out of every group for `reason`. Names that are not providers are ignored. */
  markUnavailable(provider: string, reason: UnavailableReason, until?: number): void {
    if (!this.provider(provider)) return;
    const reasons = this.availability.get(provider) ?? new Map();
    reasons.set(reason, until);
    this.availability.set(provider, reasons);
    this.forEachSelectorWith(provider, (s) => s.markUnavailable(provider, reason, until));
  }

  /** Clears one reason (or, without one, every reason) that holds a provider out. */
  markAvailable(provider: string, reason?: UnavailableReason): void {
    const reasons = this.availability.get(provider);
    if (!reasons) return;
    if (reason === undefined) reasons.clear();
    else reasons.delete(reason);
    if (reasons.size === 0) this.availability.delete(provider);
    this.forEachSelectorWith(provider, (s) => s.markAvailable(provider, reason));
  }

  /** Whether a provider is in the running. */
  isAvailable(provider: string): boolean {
    return !this.availability.has(provider);
  }

  /** Sets a provider's remaining quota (the `quota_aware` strategy reads it). */
  setRemainingQuota(provider: string, remaining: number | undefined): void {
    this.quota.set(provider, remaining);
    this.forEachSelectorWith(provider, (s) => s.setRemainingQuota(provider, remaining));
  }

  /** Records a request's latency for the `latency` strategy. */
  recordLatency(provider: string, latencyMs: number): void {
    this.forEachSelectorWith(provider, (s) => s.recordLatency(provider, latencyMs));
  }

  /** Status for `GET /v0/operations/load_balancing/status`: every provider, and each group. */
  status(): RoutingStatus {
    const all = new Selector(this.specsFor(this.providers.filter((p) => p.enabled !== false).map((p) => p.name)), {
      strategy: this.strategy,
    });
    for (const [name, reasons] of this.availability) {
      if (!all.candidateIds.includes(name)) continue;
      for (const [reason, until] of reasons) all.markUnavailable(name, reason, until);
    }
    for (const [name, remaining] of this.quota) if (all.candidateIds.includes(name)) all.setRemainingQuota(name, remaining);
    const overview = all.status();
    const groups = [...this.selectors].map(([key, selector]) => ({ providers: key.split('\u0000'), status: selector.status() }));
    // Per-provider figures (picks, latency, in flight) are summed or taken from the groups that saw them.
    for (const candidate of overview.candidates) {
      candidate.picks = 0;
      for (const group of groups) {
        const seen = group.status.candidates.find((c) => c.id === candidate.id);
        if (!seen) continue;
        candidate.picks += seen.picks;
        candidate.in_flight = Math.max(candidate.in_flight, seen.in_flight);
        candidate.average_latency_ms ??= seen.average_latency_ms;
        candidate.remaining_quota ??= seen.remaining_quota;
      }
    }
    const last = this.lastUsed?.status();
    return {
      ...overview,
      counter: groups.reduce((sum, g) => sum + g.status.counter, 0),
      last_decision: last?.last_decision ?? null,
      groups,
    };
  }

  private specsFor(names: readonly string[]) {
    return names.map((name) => {
      const p = this.providers.find((candidate) => candidate.name === name);
      return {
        id: name,
        ...(p?.priority !== undefined ? { priority: p.priority } : {}),
        ...(p?.weight !== undefined ? { weight: p.weight } : {}),
        ...(p?.costPer1k ? { costPer1k: p.costPer1k } : {}),
      };
    });
  }

  private forEachSelectorWith(provider: string, fn: (selector: Selector) => void): void {
    for (const selector of this.selectors.values()) if (selector.candidateIds.includes(provider)) fn(selector);
  }
}
