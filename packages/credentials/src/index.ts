/**
 * @module @switchyard/credentials
 * The credentials an LLM gateway uses upstream: the credential model, stores
 * (memory, encrypted files), quota tracking with UTC resets, a pool per
 * provider that rotates and cools credentials down, a single-flight refresh
 * worker, OAuth device sign-in (RFC 8628) with two provider presets and a
 * plugin interface, and the auth update queue that applies changes at
 * runtime. Tokens never leave through logs, errors, events or status.
 */
export {
  CREDENTIAL_STATUSES,
  CREDENTIAL_TYPES,
  type Credential,
  type CredentialPatch,
  CredentialPatchSchema,
  CredentialSchema,
  type CredentialStatus,
  type CredentialStatusRecord,
  type CredentialType,
  describeCredential,
  isSafeCredentialId,
  type NewCredential,
  NewCredentialSchema,
  type OAuthDetails,
  OAuthDetailsSchema,
  parseCredential,
  type Quota,
  QuotaSchema,
  type QuotaStatus,
  redactCredential,
  remainingOf,
  type UnavailableReason,
} from './credential.js';
export { type EncryptedEnvelope, EncryptionKey, generateEncryptionKey, openSecrets, parseEncryptionKey, sealSecrets } from './encryption.js';
export {
  CredentialNotFound,
  CredentialsError,
  type CredentialsErrorCode,
  type FieldIssue,
  NoCredentials,
  RevisionConflict,
} from './errors.js';
export {
  decodeCredentialFile,
  encodeCredentialFile,
  FILE_FORMAT_VERSION,
  providerFromFileName,
} from './store/credentialFile.js';
export type {
  CredentialStore,
  DeleteOptions,
  PutOptions,
  StoreBackend,
  StoreChange,
  Unsubscribe,
} from './store/credentialStore.js';
export { FileCredentialStore, type FileCredentialStoreOptions, type RekeyReport } from './store/fileCredentialStore.js';
export { MemoryCredentialStore } from './store/memoryCredentialStore.js';
export { applyDelta, FileQuotaStore, MemoryQuotaStore, type QuotaDelta, type QuotaStore, type QuotaUsage } from './store/quotaStore.js';
