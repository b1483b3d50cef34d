/**
 * @module @switchyard/runtime/postgres
 * PostgreSQL building blocks shared by every package's PostgreSQL adapter:
 * a pool from a URL or config, a LISTEN/NOTIFY listener that reconnects, and
 * numbered migrations per component (`pg` is an optional peer dependency).
 */
export { type Migration, runMigrations } from './postgres/migrations.js';
export { PgListener, type PgListenerOptions, type ReconnectBackoff } from './postgres/pgListener.js';
export { clientConfig, type PgConnection, poolFor } from './postgres/pgPool.js';
