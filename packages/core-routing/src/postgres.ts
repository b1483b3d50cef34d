/**
 * @module @switchyard/core-routing/postgres
 * PostgreSQL adapter of core-routing's cooldown port (`pg` is an optional
 * peer dependency: install it to use this entry). `PostgresCooldownStateStore`
 * shares cooldowns between gateway nodes.
 */
export {
  DEFAULT_COOLDOWN_CHANNEL,
  PostgresCooldownStateStore,
  type PostgresCooldownStateStoreOptions,
} from './postgres/postgresCooldownStateStore.js';
