/**
 * @module @switchyard/credentials/postgres
 * The PostgreSQL adapters of the credentials package, for several gateway
 * nodes over one database (`pg` is an optional peer dependency: install it
 * to use this entry).
 */
export { PostgresQuotaStore, type PostgresQuotaStoreOptions } from './postgres/postgresQuotaStore.js';
export { CREDENTIALS_MIGRATIONS } from './postgres/schema.js';
