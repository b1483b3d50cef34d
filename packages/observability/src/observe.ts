/**
 * @module observe
 * Wires emitters to observers. The relay, cooldown manager, health
 * monitor, self-healer, credential pools, websocket routes and workflow service emit typed events; this
 * module subscribes the metrics, the request log, the alert inputs, the
 * tracer and the rotation notices to them, and returns the function that
 * unsubscribes everything. Each observer call is isolated: an observer that
 * throws is reported, never propagated into the emitter, whose `emit` runs
 * on the request path.
 */
import type { Logger } from 'pino';
import type { AlertManager } from './alerts/alertManager.js';
import {
  type CooldownEvents,
  type CredentialEvents,
  type EventObserver,
  type EventSource,
  type HealingEvents,
  type HealthEvents,
  OBSERVER_METHODS,
  type ObservedEvents,
  type RelayEvents,
  type WebsocketEvents,
  type WorkflowEvents,
} from './events.js';
import { EventLog } from './logging/eventLog.js';

/** The gateway's emitters; any may be absent. */
export interface GatewaySources {
  relay?: EventSource;
  cooldowns?: EventSource;
  health?: EventSource;
  /** The self-healer's emitter. */
  healer?: EventSource;
  /** One credential pool's emitter, or one per provider. */
  credentials?: EventSource | readonly EventSource[];
  /** The websocket routes' emitter. */
  websocket?: EventSource;
}

/** What to feed. `logger` may be a pino logger (wrapped in an {@link EventLog}) or any observer. */
export interface ObserverSinks {
  metrics?: EventObserver;
  logger?: Logger | EventObserver;
  /** An AlertManager (its signal store is fed) or any observer. */
  alerts?: AlertManager | EventObserver;
  tracing?: EventObserver;
  /** Credential-rotation notices. */
  notifications?: EventObserver;
  /** Anything else. */
  observers?: readonly EventObserver[];
  /** Called when an observer throws (default: logged through `logger`, first time per event and then every 1,000th). */
  onError?: (error: unknown, event: keyof ObservedEvents) => void;
}

const RELAY_EVENTS: (keyof RelayEvents)[] = ['request:start', 'request:end', 'attempt:end'];
const COOLDOWN_EVENTS: (keyof CooldownEvents)[] = ['cooldown:start', 'cooldown:end'];
const HEALTH_EVENTS: (keyof HealthEvents)[] = ['health:change', 'health:check'];
const HEALING_EVENTS: (keyof HealingEvents)[] = ['healing:action', 'healing:outcome'];
const CREDENTIAL_EVENTS: (keyof CredentialEvents)[] = ['credential:rotated', 'quota:update'];
const WEBSOCKET_EVENTS: (keyof WebsocketEvents)[] = ['websocket:open', 'websocket:rejected', 'websocket:close', 'websocket:message'];
const WORKFLOW_EVENTS: (keyof WorkflowEvents)[] = [
  'workflow:transition',
  'workflow:gate_failed',
  'workflow:subcommand',
  'workflow:agent_job',
];

function isPinoLogger(value: unknown): value is Logger {
  return typeof (value as Logger).info === 'function' && typeof (value as Logger).isLevelEnabled === 'function';
}

function isAlertManager(value: unknown): value is AlertManager {
  return typeof (value as AlertManager).evaluate === 'function' && typeof (value as AlertManager).signals === 'object';
}

function observersOf(sinks: ObserverSinks): EventObserver[] {
  const list: EventObserver[] = [];
  if (sinks.metrics) list.push(sinks.metrics);
  if (sinks.logger) list.push(isPinoLogger(sinks.logger) ? new EventLog(sinks.logger) : sinks.logger);
  if (sinks.alerts) list.push(isAlertManager(sinks.alerts) ? sinks.alerts.signals : sinks.alerts);
  if (sinks.tracing) list.push(sinks.tracing);
  if (sinks.notifications) list.push(sinks.notifications);
  list.push(...(sinks.observers ?? []));
  return list;
}

function defaultOnError(sinks: ObserverSinks): (error: unknown, event: keyof ObservedEvents) => void {
  const counts = new Map<string, number>();
  const logger = sinks.logger && isPinoLogger(sinks.logger) ? sinks.logger : undefined;
  return (error, event) => {
    const count = (counts.get(event) ?? 0) + 1;
    counts.set(event, count);
    if (logger && (count === 1 || count % 1000 === 0)) logger.error({ event, err: error, occurrences: count }, 'observer_failed');
  };
}

function subscribe(
  source: EventSource,
  events: readonly (keyof ObservedEvents)[],
  observers: readonly EventObserver[],
  onError: (error: unknown, event: keyof ObservedEvents) => void,
): () => void {
  const detachers: (() => void)[] = [];
  for (const event of events) {
    const method = OBSERVER_METHODS[event];
    const handlers = observers.filter((o) => typeof o[method] === 'function').map((o) => (o[method] as (payload: unknown) => void).bind(o));
    if (handlers.length === 0) continue;
    const listener = (payload: unknown) => {
      for (const handler of handlers) {
        try {
          handler(payload);
        } catch (error) {
          try {
            onError(error, event);
          } catch {
            // The error reporter itself failed; nothing sensible is left to do.
          }
        }
      }
    };
    source.on(event, listener);
    detachers.push(() => source.off(event, listener));
  }
  return () => {
    for (const detach of detachers.splice(0)) detach();
  };
}

/**
 * Subscribes observability to the gateway's emitters.
 *
 * @returns a function that unsubscribes everything.
 * @example
 * ```ts
 * const detach = observeGateway(
 *   { relay: relay.events, cooldowns: cooldowns.events, health: health.events, credentials: pools.map((p) => p.events) },
 *   { metrics, logger, alerts, notifications: rotationNotifier },
 * );
 * ```
 */
export function observeGateway(sources: GatewaySources, sinks: ObserverSinks): () => void {
  const observers = observersOf(sinks);
  const onError = sinks.onError ?? defaultOnError(sinks);
  const detachers: (() => void)[] = [];
  if (sources.relay) detachers.push(subscribe(sources.relay, RELAY_EVENTS, observers, onError));
  if (sources.cooldowns) detachers.push(subscribe(sources.cooldowns, COOLDOWN_EVENTS, observers, onError));
  if (sources.health) detachers.push(subscribe(sources.health, HEALTH_EVENTS, observers, onError));
  if (sources.healer) detachers.push(subscribe(sources.healer, HEALING_EVENTS, observers, onError));
  if (sources.websocket) detachers.push(subscribe(sources.websocket, WEBSOCKET_EVENTS, observers, onError));
  const pools = sources.credentials === undefined ? [] : Array.isArray(sources.credentials) ? sources.credentials : [sources.credentials];
  for (const pool of pools as EventSource[]) detachers.push(subscribe(pool, CREDENTIAL_EVENTS, observers, onError));
  return () => {
    for (const detach of detachers.splice(0)) detach();
  };
}

/**
 * Subscribes observability to the workflow service's emitter.
 *
 * @example
 * ```ts
 * const detach = observeWorkflow(workflow.events, { metrics: workflowMetrics, logger, alerts });
 * ```
 */
export function observeWorkflow(source: EventSource, sinks: ObserverSinks): () => void {
  return subscribe(source, WORKFLOW_EVENTS, observersOf(sinks), sinks.onError ?? defaultOnError(sinks));
}
