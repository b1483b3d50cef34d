/**
 * @module availability
 * Keeps the routing table's view of which providers may be picked in step
 * with provider cooldowns and health: a provider cooling down or unhealthy
 * is held out of selection (so picking never has to ask), and let back when
 * the cooldown ends or health recovers, whether that happened on this node
 * or (through a shared store) another. Runs on events, never per request.
 */
import type { CooldownEvents, HealthEvents } from '@switchyard/core-routing';
import type { RelayOptions } from './relayOptions.js';
import type { RoutingTable } from './routingTable.js';

/** Follows the cooldown and health events that change availability; returns what stops following them. */
export function followAvailability(table: RoutingTable, { cooldowns, health }: Pick<RelayOptions, 'cooldowns' | 'health'>): (() => void)[] {
  const unsubscribe: (() => void)[] = [];
  if (cooldowns?.events) {
    const onStart: CooldownEvents['cooldown:start'] = (period) => table.markUnavailable(period.key, 'cooldown', period.endsAt);
    const onUpdate: CooldownEvents['cooldown:update'] = (event) => table.markUnavailable(event.period.key, 'cooldown', event.period.endsAt);
    const onEnd: CooldownEvents['cooldown:end'] = (event) => table.markAvailable(event.key, 'cooldown');
    // Past its end, a cooldown lasts until a health check passes: the next check is when it may return,
    // which is what a client held out is told (Retry-After), not an end already gone by.
    const onCheckFailed: CooldownEvents['cooldown:check_failed'] = (event) =>
      table.markUnavailable(event.key, 'cooldown', event.nextCheckAt);
    cooldowns.events.on('cooldown:start', onStart);
    cooldowns.events.on('cooldown:update', onUpdate);
    cooldowns.events.on('cooldown:end', onEnd);
    cooldowns.events.on('cooldown:check_failed', onCheckFailed);
    unsubscribe.push(() => {
      cooldowns.events?.off('cooldown:start', onStart);
      cooldowns.events?.off('cooldown:update', onUpdate);
      cooldowns.events?.off('cooldown:end', onEnd);
      cooldowns.events?.off('cooldown:check_failed', onCheckFailed);
    });
  }
  if (health?.events) {
    const onChange: HealthEvents['health:change'] = (event) => {
      if (event.status === 'unhealthy') table.markUnavailable(event.provider, 'unhealthy');
      else table.markAvailable(event.provider, 'unhealthy');
    };
    health.events.on('health:change', onChange);
    unsubscribe.push(() => health.events?.off('health:change', onChange));
  }
  return unsubscribe;
}

/** Applies the current cooldown and health state to every provider (at start, and after a reload). */
export function applyAvailability(
  table: RoutingTable,
  { providers, cooldowns, health }: Pick<RelayOptions, 'providers' | 'cooldowns' | 'health'>,
): void {
  const watched = new Set(health?.providers ?? []);
  for (const provider of providers) {
    const period = cooldowns?.period?.(provider.name);
    if (period) table.markUnavailable(provider.name, 'cooldown', period.endsAt);
    else table.markAvailable(provider.name, 'cooldown');
    if (health?.isHealthy && watched.has(provider.name) && !health.isHealthy(provider.name))
      table.markUnavailable(provider.name, 'unhealthy');
    else table.markAvailable(provider.name, 'unhealthy');
  }
}
