/**
 * @module @switchyard/core-routing
 * Pure routing decisions for an LLM gateway: selection strategies, cooldown,
 * health, self-healing and the failover ring. Framework-agnostic: time comes
 * from an injected clock, state sits behind ports, and every state change is
 * a typed event.
 */
export { type Clock, every, FakeScheduler, type Scheduler, systemClock, systemScheduler, type TimerHandle } from './clock.js';
export { AllProvidersInCooldown, NoProviderAvailable, ProviderNotFound, RoutingError, type RoutingErrorCode } from './errors.js';
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
