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
  type AuthConfig,
  type AuthConfigInput,
  AuthConfigSchema,
  DurationSchema,
  type OpenCredentialsOptions,
  type OpenedCredentials,
  openCredentials,
  ProviderQuotaSchema,
} from './config/authConfig.js';
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
export {
  type EncryptedEnvelope,
  EncryptionKey,
  generateEncryptionKey,
  openSecrets,
  parseEncryptionKey,
  sealSecrets,
} from './encryption.js';
export {
  CredentialNotFound,
  CredentialsError,
  type CredentialsErrorCode,
  type FieldIssue,
  NoCredentials,
  RevisionConflict,
} from './errors.js';
export { CredentialManager } from './manager/credentialManager.js';
export { processRefreshLock, type RefreshLock } from './manager/credentialWriter.js';
export {
  type CredentialManagerOptions,
  MANAGER_EVENT_NAMES,
  type ManagerEvents,
  POOL_EVENT_NAMES,
  type ProviderQuotaConfig,
  type RefreshConfig,
  type RuntimeUpdate,
  type RuntimeUpdateResult,
} from './manager/managerTypes.js';
export type { AuthFlow, AuthFlowContext, DeviceCodePrompt, FlowTokens, PendingSignIn, SignedIn } from './oauth/authFlow.js';
export {
  type CloudCodingAssistantFlowOptions,
  type CloudSignInOptions,
  CloudSignInOptionsSchema,
  cloudCodingAssistantFlow,
} from './oauth/cloudCodingAssistantFlow.js';
export { type CodeAssistantFlowOptions, codeAssistantFlow } from './oauth/codeAssistantFlow.js';
export { type DeviceCodeFlowOptions, deviceCodeFlow, refreshWithToken } from './oauth/deviceCodeFlow.js';
export {
  DEFAULT_INTERVAL_MS,
  type DeviceAuthorization,
  deviceAuthorization,
  type FormDeviceSignIn,
  type PollOptions,
  type PollOutcome,
  pollForToken,
  requestDeviceCode,
  requestDeviceToken,
  SLOW_DOWN_STEP_MS,
  startFormDeviceSignIn,
  type TokenSet,
} from './oauth/deviceFlow.js';
export { FileSignInDirectory } from './oauth/fileSignInDirectory.js';
export { createHttpClient, type HttpClient, type HttpClientOptions, type HttpRequest, type HttpResponse } from './oauth/http.js';
export {
  INTERRUPTED_ERROR,
  MemorySignInDirectory,
  publicSignInStatus,
  type SignInDirectory,
  type SignInRecord,
  type SignInRecordWrite,
} from './oauth/signInDirectory.js';
export {
  type SignInMeta,
  type SignInSession,
  SignInSessions,
  type SignInSessionsOptions,
  type SignInState,
} from './oauth/signInSessions.js';
export {
  type CooldownEvents,
  type CooldownFailure,
  CooldownTracker,
  type CooldownTrackerOptions,
  type CredentialCooldowns,
} from './pool/cooldownTracker.js';
export { CredentialPool, type CredentialPoolOptions, POOL_STRATEGIES, type PoolStrategy } from './pool/credentialPool.js';
export type { AcquiredCredential, CredentialFailure, CredentialUsage, PoolEvents, RotationReason } from './pool/poolEvents.js';
export {
  type AdmissionCounts,
  type QuotaAdmission,
  QuotaTracker,
  type QuotaTrackerEvents,
  type QuotaTrackerOptions,
  type QuotaUpdateEvent,
} from './pool/quotaTracker.js';
export {
  type AppliedUpdate,
  type AuthUpdate,
  AuthUpdateQueue,
  type QueuedUpdate,
  type QueueStats,
  type UpdateSource,
} from './queue/authUpdateQueue.js';
export { type RefreshEvents, type RefreshStatusRecord, RefreshWorker, type RefreshWorkerOptions } from './refresh/refreshWorker.js';
export { decodeCredentialFile, encodeCredentialFile, FILE_FORMAT_VERSION, providerFromFileName } from './store/credentialFile.js';
export type { CredentialStore, DeleteOptions, PutOptions, StoreBackend, StoreChange, Unsubscribe } from './store/credentialStore.js';
export {
  type AuthFileInfo,
  FileCredentialStore,
  type FileCredentialStoreOptions,
  type FileRekeyOptions,
  type RekeyReport,
} from './store/fileCredentialStore.js';
export { FileQuotaStore } from './store/fileQuotaStore.js';
export { MemoryCredentialStore } from './store/memoryCredentialStore.js';
export {
  applyDelta,
  MemoryQuotaStore,
  type QuotaDelta,
  type QuotaReservationAnswer,
  type QuotaReservationRequest,
  type QuotaStore,
  type QuotaTotal,
  type QuotaUsage,
} from './store/quotaStore.js';
export { type CredentialsLogger, silentLogger } from './util/logger.js';
export { nextPeriodStart, parseDuration, periodStart, type ResetSchedule, scheduleAt } from './util/time.js';
export { type FileWatch, watchFile } from './watch/watchFile.js';
