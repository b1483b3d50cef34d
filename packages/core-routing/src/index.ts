/**
 * @module @switchyard/core-routing
 * Pure routing decisions for an LLM gateway: selection strategies, cooldown,
 * health, self-healing and the failover ring, with the relay's event types
 * that metrics and logs subscribe to. Framework-agnostic: time comes from an
 * injected clock (`@switchyard/runtime`), state sits behind ports, and every
 * state change is a typed event.
 */
export { type AvailabilityBinding, bindAvailability } from './bindAvailability.js';
export { CooldownManager, MAX_COOLDOWN_MS } from './cooldown/cooldownManager.js';
export type { CooldownDetection, CooldownDurations } from './cooldown/cooldownSettings.js';
export {
  COOLDOWN_REASONS,
  type CooldownDeleteOptions,
  type CooldownEndCause,
  type CooldownPeriod,
  type CooldownReason,
  type CooldownStateStore,
  type CooldownStoreChange,
  MemoryCooldownStateStore,
  parseCooldownPeriod,
  samePeriod,
} from './cooldown/cooldownStateStore.js';
export type {
  CooldownEndEvent,
  CooldownEvents,
  CooldownFailure,
  CooldownManagerOptions,
  CooldownSource,
  CooldownStatus,
} from './cooldown/cooldownTypes.js';
export {
  AllProvidersInCooldown,
  NoProviderAvailable,
  ProviderNotFound,
  RoutingError,
  type RoutingErrorCode,
} from './errors.js';
export { HealthMonitor } from './health/healthMonitor.js';
export type {
  HealthAggregate,
  HealthCheckResult,
  HealthEvents,
  HealthMonitorOptions,
  HealthProbe,
  HealthRecord,
  HealthSettings,
  HealthStatus,
  ProviderStatusRecord,
} from './health/healthTypes.js';
export {
  type HealingAction,
  type HealingActionRecord,
  type HealingOutcome,
  type HealingStatus,
  SelfHealer,
  type SelfHealingEvents,
  type SelfHealingSettings,
} from './health/selfHealer.js';
export type {
  AttemptEndEvent,
  ClientIdentity,
  DecisionEvent,
  RelayEvents,
  RelayOutcome,
  RequestEndEvent,
  RequestStartEvent,
} from './relayEvents.js';
export { ConsistentHashRing, type ConsistentHashRingOptions, ringPosition } from './ring/consistentHashRing.js';
export {
  type CandidateSpec,
  type CandidateStatus,
  type LoadBalancingStatus,
  type SelectOptions,
  Selector,
  type SelectorOptions,
  STRATEGIES,
  type StrategyName,
  type UnavailableReason,
} from './selection/selector.js';
