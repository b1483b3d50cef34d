/**
 * @module alertManager
 * Evaluates alert rules on an injected scheduler and keeps their state.
 * A rule instance (the rule, or the rule for one provider) goes
 * inactive → pending when its condition holds, pending → firing once it has
 * held for the rule's `duration`, and firing → resolved when it stops
 * holding. Notifications go out on the transitions, so a firing alert
 * notifies once (and once more when it resolves), never per evaluation.
 */
import { every, type Scheduler, systemScheduler } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { AlertRuleConfig, Channel } from '../config/schemas.js';
import { formatDuration } from '../config/units.js';
import type { NotificationDispatcher } from '../notify/dispatcher.js';
import type { AlertNotification, Severity } from '../notify/notification.js';
import { evaluateCondition, type ParsedCondition, parseCondition } from './expression.js';
import { SignalStore } from './signalStore.js';

/** Options of {@link AlertManager}. */
export interface AlertManagerOptions {
  rules: readonly AlertRuleConfig[];
  scheduler?: Scheduler;
  /** Default 15 s. */
  evaluationIntervalMs?: number;
  /** Where rule inputs come from; by default a store sized for the rules' longest window. */
  signals?: SignalStore;
  /** Providers to evaluate per-provider rules for before they see traffic. */
  knownProviders?: Iterable<string>;
  dispatcher?: NotificationDispatcher;
  logger?: Logger;
  /** Registers `svc_alerts{rule,severity,state}` here. */
  registry?: Registry;
  /** Prefix of pager dedup keys (default `switchyard`). */
  source?: string;
}

/** One active instance of a rule. */
export interface AlertInstanceStatus {
  provider: string | null;
  state: 'pending' | 'firing';
  active_since: string;
  fired_at: string | null;
  values: Record<string, number | string | null>;
}

/** One rule, as `GET /v0/operations/alerts` shows it. */
export interface AlertRuleStatus {
  name: string;
  condition: string;
  duration_ms: number;
  severity: Severity;
  notifications: Channel[];
  scope: 'global' | 'provider';
  /** The most severe state among its instances. */
  state: 'inactive' | 'pending' | 'firing';
  instances: AlertInstanceStatus[];
  last_fired_at: string | null;
  last_resolved_at: string | null;
}

/** The whole alerting state. */
export interface AlertsStatus {
  evaluation_interval_ms: number;
  evaluated_at: string | null;
  rules: AlertRuleStatus[];
}

/** Events of {@link AlertManager}: the transitions, with the notification payload. */
export interface AlertEvents {
  'alert:pending': (alert: AlertNotification) => void;
  'alert:firing': (alert: AlertNotification) => void;
  'alert:resolved': (alert: AlertNotification) => void;
}

interface Instance {
  provider: string | null;
  state: 'pending' | 'firing';
  activeSince: number;
  firedAt: number | null;
  values: Record<string, number | string | null>;
}

interface Rule {
  config: AlertRuleConfig;
  condition: ParsedCondition;
  instances: Map<string, Instance>;
  lastFiredAt: number | null;
  lastResolvedAt: number | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * Evaluates alert rules and notifies on transitions.
 *
 * @example
 * ```ts
 * const alerts = new AlertManager({ rules: alertsConfigSchema.parse({}).rules, dispatcher });
 * observeGateway({ relay, health }, { alerts });
 * alerts.start();
 * alerts.status(); // for GET /v0/operations/alerts
 * ```
 */
export class AlertManager {
  readonly events = new EventEmitter<AlertEvents>();
  /** The store the rules read; feed it events (observeGateway does). */
  readonly signals: SignalStore;
  private readonly scheduler: Scheduler;
  private readonly intervalMs: number;
  private rules: Rule[];
  private readonly dispatcher: NotificationDispatcher | undefined;
  private readonly logger: Logger | undefined;
  private readonly source: string;
  private stopLoop: (() => void) | undefined;
  private evaluatedAt: number | null = null;

  constructor(options: AlertManagerOptions) {
    this.scheduler = options.scheduler ?? systemScheduler;
    this.intervalMs = options.evaluationIntervalMs ?? 15_000;
    this.rules = options.rules.map((config) => ({
      config,
      condition: parseCondition(config.condition),
      instances: new Map(),
      lastFiredAt: null,
      lastResolvedAt: null,
    }));
    const horizonMs = Math.max(60_000, ...this.rules.map((r) => r.condition.maxWindowMs));
    this.signals =
      options.signals ??
      new SignalStore({ clock: this.scheduler, horizonMs, ...(options.knownProviders ? { knownProviders: options.knownProviders } : {}) });
    this.dispatcher = options.dispatcher;
    this.logger = options.logger;
    this.source = options.source ?? 'switchyard';
    if (options.registry) this.registerMetrics(options.registry);
  }

  /**
   * Replaces the rules (a config reload). A rule whose name, condition,
   * duration and severity are unchanged keeps its state, so a reload does
   * not re-notify what is already firing; a rule that is gone or changed
   * resolves its firing instances first. Windows longer than the signal
   * store's horizon (fixed at construction) are read over the horizon.
   *
   * @example
   * ```ts
   * alerts.setRules(alertsConfigSchema.parse(next.alerts).rules);
   * ```
   */
  setRules(rules: readonly AlertRuleConfig[]): void {
    const parsed = rules.map((config) => ({ config, condition: parseCondition(config.condition) }));
    const now = this.scheduler.now();
    const same = (a: AlertRuleConfig, b: AlertRuleConfig) =>
      a.condition === b.condition && a.duration === b.duration && a.severity === b.severity;
    const next: Rule[] = parsed.map(({ config, condition }) => {
      const previous = this.rules.find((r) => r.config.name === config.name && same(r.config, config));
      if (previous) {
        previous.config = config;
        return previous;
      }
      return { config, condition, instances: new Map(), lastFiredAt: null, lastResolvedAt: null };
    });
    for (const old of this.rules) {
      if (next.includes(old)) continue;
      for (const [key, instance] of old.instances) this.step(old, key, instance.provider, false, instance.values, now);
    }
    this.rules = next;
    const longest = Math.max(0, ...next.map((r) => r.condition.maxWindowMs));
    if (longest > this.signals.horizonMs) {
      this.logger?.warn({ window_ms: longest, horizon_ms: this.signals.horizonMs }, 'alert_window_beyond_horizon');
    }
  }

  /** Evaluates every `evaluationIntervalMs` until {@link stop}. */
  start(): void {
    this.stopLoop ??= every(this.scheduler, this.intervalMs, () => this.evaluate());
  }

  stop(): void {
    this.stopLoop?.();
    this.stopLoop = undefined;
  }

  /** Evaluates every rule now. */
  evaluate(): void {
    const now = this.scheduler.now();
    this.evaluatedAt = now;
    for (const rule of this.rules) {
      const scopes: (string | null)[] = rule.condition.scope === 'global' ? [null] : this.signals.providers();
      const seen = new Set<string>();
      for (const provider of scopes) {
        const key = provider ?? '';
        seen.add(key);
        const result = evaluateCondition(rule.condition, this.signals.reader, provider);
        this.step(rule, key, provider, result.active, result.values, now);
      }
      for (const [key, instance] of rule.instances)
        if (!seen.has(key)) this.step(rule, key, instance.provider, false, instance.values, now);
    }
  }

  /** Rule states for `GET /v0/operations/alerts`. */
  status(): AlertsStatus {
    return {
      evaluation_interval_ms: this.intervalMs,
      evaluated_at: iso(this.evaluatedAt),
      rules: this.rules.map((rule) => {
        const instances = [...rule.instances.values()];
        const state = instances.some((i) => i.state === 'firing') ? 'firing' : instances.length > 0 ? 'pending' : 'inactive';
        return {
          name: rule.config.name,
          condition: rule.config.condition,
          duration_ms: rule.config.duration,
          severity: rule.config.severity,
          notifications: [...rule.config.notifications],
          scope: rule.condition.scope,
          state,
          instances: instances.map((i) => ({
            provider: i.provider,
            state: i.state,
            active_since: iso(i.activeSince)!,
            fired_at: iso(i.firedAt),
            values: { ...i.values },
          })),
          last_fired_at: iso(rule.lastFiredAt),
          last_resolved_at: iso(rule.lastResolvedAt),
        };
      }),
    };
  }

  private step(rule: Rule, key: string, provider: string | null, active: boolean, values: Instance['values'], now: number): void {
    const instance = rule.instances.get(key);
    if (!active) {
      if (!instance) return;
      rule.instances.delete(key);
      if (instance.state === 'firing') {
        rule.lastResolvedAt = now;
        this.transition('resolved', rule, { ...instance, values }, now);
      }
      return;
    }
    if (!instance) {
      const fresh: Instance = { provider, state: 'pending', activeSince: now, firedAt: null, values };
      rule.instances.set(key, fresh);
      if (rule.config.duration > 0) this.transition('pending', rule, fresh, now);
      else this.fire(rule, fresh, now);
      return;
    }
    instance.values = values;
    if (instance.state === 'pending' && now - instance.activeSince >= rule.config.duration) this.fire(rule, instance, now);
  }

  private fire(rule: Rule, instance: Instance, now: number): void {
    instance.state = 'firing';
    instance.firedAt = now;
    rule.lastFiredAt = now;
    this.transition('firing', rule, instance, now);
  }

  private transition(to: 'pending' | 'firing' | 'resolved', rule: Rule, instance: Instance, now: number): void {
    const where = instance.provider === null ? '' : ` for ${instance.provider}`;
    const held = rule.config.duration > 0 ? ` for ${formatDuration(rule.config.duration)}` : '';
    const notification: AlertNotification = {
      kind: 'alert',
      status: to === 'resolved' ? 'resolved' : 'firing',
      rule: rule.config.name,
      severity: rule.config.severity,
      provider: instance.provider,
      condition: rule.config.condition,
      summary: rule.config.summary ?? `${rule.config.condition}${where}${held}`,
      values: instance.values,
      activeSince: instance.activeSince,
      firedAt: instance.firedAt ?? now,
      resolvedAt: to === 'resolved' ? now : null,
      dedupKey: `${this.source}:${rule.config.name}:${instance.provider ?? '*'}`,
    };
    this.events.emit(`alert:${to}`, notification);
    if (to === 'pending') return;
    this.logger?.[to === 'firing' ? 'warn' : 'info'](
      { rule: notification.rule, severity: notification.severity, provider: notification.provider, values: notification.values },
      to === 'firing' ? 'alert_firing' : 'alert_resolved',
    );
    this.dispatcher?.dispatch(notification, rule.config.notifications);
  }

  private registerMetrics(registry: Registry): void {
    const self = this;
    new Gauge({
      name: 'svc_alerts',
      help: 'Alert rule instances by rule, severity and state (pending or firing).',
      labelNames: ['rule', 'severity', 'state'],
      registers: [registry],
      collect() {
        for (const rule of self.rules) {
          let pending = 0;
          let firing = 0;
          for (const instance of rule.instances.values()) instance.state === 'firing' ? firing++ : pending++;
          this.set({ rule: rule.config.name, severity: rule.config.severity, state: 'pending' }, pending);
          this.set({ rule: rule.config.name, severity: rule.config.severity, state: 'firing' }, firing);
        }
      },
    });
  }
}
