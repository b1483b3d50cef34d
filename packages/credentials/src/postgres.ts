/**
 * @module @switchyard/credentials/postgres
 * The PostgreSQL adapters of the credentials package, for several gateway
 * nodes over one database (`pg` is an optional peer dependency: install it
 * to use this entry).
 */

export {
  AUTH_EVENT_SCHEMA_VERSION,
  type AuthChangeEvent,
  AuthChangeEventSchema,
  type AuthEvent,
  type AuthEventCorrelation,
  type AuthEventOrigin,
  AuthEventSchema,
  type ConfigReloadEvent,
  ConfigReloadEventSchema,
  DEFAULT_AUTH_EVENTS_CHANNEL,
  decodeAuthEvent,
  MAX_AUTH_EVENT_BYTES,
  newUlid,
} from './postgres/authEvent.js';
export {
  AuthEventBus,
  type AuthEventBusEvents,
  type AuthEventBusOptions,
  type AuthEventBusSettings,
  type AuthEventBusStats,
  type AuthEventSource,
  type RevisionState,
} from './postgres/authEventBus.js';
export type { PostgresRekeyOptions, PostgresRekeyProgress, PostgresRekeyReport } from './postgres/credentialRekey.js';
export { PostgresCredentialStore, type PostgresCredentialStoreOptions } from './postgres/postgresCredentialStore.js';
export { DEFAULT_QUOTA_CHANNEL, PostgresQuotaStore, type PostgresQuotaStoreOptions } from './postgres/postgresQuotaStore.js';
export { PostgresRefreshLock, type PostgresRefreshLockOptions } from './postgres/postgresRefreshLock.js';
export {
  DEFAULT_SIGN_IN_CHANNEL,
  PostgresSignInDirectory,
  type PostgresSignInDirectoryOptions,
} from './postgres/postgresSignInDirectory.js';
export { CREDENTIALS_MIGRATIONS } from './postgres/schema.js';
