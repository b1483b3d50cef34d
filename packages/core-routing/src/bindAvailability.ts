/**
 * @module bindAvailability
 * Keeps a `Selector`'s candidates in step with a `CooldownManager` and a
 * `HealthMonitor`: a cooldown holds a candidate out (with its end, so
 * `AllProvidersInCooldown` can say when to retry), an unhealthy status
 * holds it out, and it returns only once neither does. Each source clears
 * only its own reason, so a candidate a credential pool marked `exhausted`
 * stays out too.
 */
import type { CooldownManager } from './cooldown/cooldownManager.js';
import type { CooldownEvents } from './cooldown/cooldownTypes.js';
import type { HealthMonitor } from './health/healthMonitor.js';
import type { HealthEvents } from './health/healthTypes.js';
import type { Selector } from './selection/selector.js';

/** The unbind function of {@link bindAvailability}, with a way to re-apply every source to every candidate. */
export type AvailabilityBinding = (() => void) & {
  /** Re-applies the current state of both sources to every candidate; call after `selector.setCandidates()`. */
  resync(): void;
};

/**
 * Binds `selector`'s availability to `sources` and applies their current
 * state at once. Keys the selector does not know (a credential's
 * `"<provider>/<id>"`, a provider of another selector) are ignored.
 * Calling the result unbinds; the reasons already set stay until cleared.
 *
 * @example
 * ```ts
 * const unbind = bindAvailability(selector, { cooldowns, health });
 * selector.setCandidates(reloaded);
 * unbind.resync();
 * ```
 */
export function bindAvailability(
  selector: Selector,
  sources: { cooldowns?: CooldownManager; health?: HealthMonitor },
): AvailabilityBinding {
  const { cooldowns, health } = sources;

  const onCooldown: CooldownEvents['cooldown:start'] = (period) => {
    if (selector.has(period.key)) selector.markUnavailable(period.key, 'cooldown', period.endsAt);
  };
  const onCooldownUpdate: CooldownEvents['cooldown:update'] = ({ period }) => onCooldown({ ...period, source: 'local' });
  const onCooldownEnd: CooldownEvents['cooldown:end'] = ({ key }) => {
    if (selector.has(key)) selector.markAvailable(key, 'cooldown');
  };
  // Past its end, a cooldown waits for a passing health check: the next check is when it may return.
  const onCheckFailed: CooldownEvents['cooldown:check_failed'] = ({ key, nextCheckAt }) => {
    if (selector.has(key)) selector.markUnavailable(key, 'cooldown', nextCheckAt);
  };
  const onHealth: HealthEvents['health:change'] = ({ provider, status }) => {
    if (!selector.has(provider)) return;
    if (status === 'unhealthy') selector.markUnavailable(provider, 'unhealthy');
    else selector.markAvailable(provider, 'unhealthy');
  };

  const resync = () => {
    const watched = new Set(health?.providers ?? []);
    for (const id of selector.candidateIds) {
      const period = cooldowns?.period(id);
      if (period) selector.markUnavailable(id, 'cooldown', period.endsAt);
      else selector.markAvailable(id, 'cooldown');
      if (health && watched.has(id) && !health.isHealthy(id)) selector.markUnavailable(id, 'unhealthy');
      else selector.markAvailable(id, 'unhealthy');
    }
  };

  cooldowns?.events.on('cooldown:start', onCooldown);
  cooldowns?.events.on('cooldown:update', onCooldownUpdate);
  cooldowns?.events.on('cooldown:end', onCooldownEnd);
  cooldowns?.events.on('cooldown:check_failed', onCheckFailed);
  health?.events.on('health:change', onHealth);
  resync();

  const unbind = () => {
    cooldowns?.events.off('cooldown:start', onCooldown);
    cooldowns?.events.off('cooldown:update', onCooldownUpdate);
    cooldowns?.events.off('cooldown:end', onCooldownEnd);
    cooldowns?.events.off('cooldown:check_failed', onCheckFailed);
    health?.events.off('health:change', onHealth);
  };
  return Object.assign(unbind, { resync });
}
