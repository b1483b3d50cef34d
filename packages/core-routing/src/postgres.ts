/**
 * @module @switchyard/core-routing/postgres
 * PostgreSQL adapters of core-routing's ports (`pg` is an optional peer
 * dependency: install it to use this entry). `PostgresCooldownStateStore`
 * shares cooldowns between gateway nodes; `PgListener` and `runMigrations`
 * are the building blocks other packages' PostgreSQL adapters reuse.
 */
export { type Migration, runMigrations } from './postgres/migrations.js';
export { PgListener, type PgListenerOptions, type ReconnectBackoff } from './postgres/pgListener.js';
export { clientConfig, type PgConnection, poolFor } from './postgres/pgPool.js';
export {
  DEFAULT_COOLDOWN_CHANNEL,
  PostgresCooldownStateStore,
  type PostgresCooldownStateStoreOptions,
} from './postgres/postgresCooldownStateStore.js';
