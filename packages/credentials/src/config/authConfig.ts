/**
 * @module authConfig
 * The `auth.*` section of the gateway config, as a zod schema the server
 * composes into its own, and {@link openCredentials}, which turns it (with
 * `auth-dir` and `providers.<p>.quota`) into a running manager over the
 * file store.
 *
 * | key | default |
 * |---|---|
 * | `auth.selection_strategy` | `round_robin` (`quota_aware`, `priority`) |
 * | `auth.refresh.enabled` | `true` |
 * | `auth.refresh.check_interval` | `5m` |
 * | `auth.refresh.refresh_lead_time` | `10m` |
 * | `auth.quota.reset_schedule.<provider>` | none (`daily` or `monthly`, UTC) |
 * | `auth.encryption.enabled` | `false` |
 * | `auth.encryption.key` | required when enabled: 32 bytes, base64 or hex |
 * | `auth.encryption.previous_keys` | `[]`: keys still readable during a rekey |
 */
import { join } from 'node:path';
import type { Scheduler } from '@switchyard/runtime';
import { z } from 'zod';
import { CredentialsError } from '../errors.js';
import { CredentialManager } from '../manager/credentialManager.js';
import type { RefreshLock } from '../manager/credentialWriter.js';
import type { CredentialManagerOptions, ProviderQuotaConfig } from '../manager/managerTypes.js';
import type { AuthFlow } from '../oauth/authFlow.js';
import { cloudCodingAssistantFlow } from '../oauth/cloudCodingAssistantFlow.js';
import { codeAssistantFlow } from '../oauth/codeAssistantFlow.js';
import { FileSignInDirectory } from '../oauth/fileSignInDirectory.js';
import type { SignInDirectory } from '../oauth/signInDirectory.js';
import { POOL_STRATEGIES } from '../pool/credentialPool.js';
import type { CredentialStore } from '../store/credentialStore.js';
import { FileCredentialStore } from '../store/fileCredentialStore.js';
import { FileQuotaStore } from '../store/fileQuotaStore.js';
import type { QuotaStore } from '../store/quotaStore.js';
import type { CredentialsLogger } from '../util/logger.js';
import { parseDuration } from '../util/time.js';

/** A duration written like `30s` or `5m`, or milliseconds; parsed to milliseconds. */
export const DurationSchema = z.union([z.string(), z.number()]).transform((value, context) => {
  try {
    return parseDuration(value);
  } catch {
    context.issues.push({ code: 'custom', message: 'must be a duration like 100ms, 30s, 5m or 1h', input: value });
    return z.NEVER;
  }
});

const ResetScheduleSchema = z.enum(['daily', 'monthly']);

/** The `auth.*` config section. */
export const AuthConfigSchema = z
  .strictObject({
    selection_strategy: z.enum(POOL_STRATEGIES).default('round_robin'),
    refresh: z
      .strictObject({
        enabled: z.boolean().default(true),
        check_interval: DurationSchema.default(5 * 60_000),
        refresh_lead_time: DurationSchema.default(10 * 60_000),
      })
      .prefault({}),
    quota: z.strictObject({ reset_schedule: z.record(z.string(), ResetScheduleSchema).default({}) }).prefault({}),
    encryption: z
      .strictObject({
        enabled: z.boolean().default(false),
        key: z.string().optional(),
        previous_keys: z.array(z.string()).default([]),
      })
      .prefault({})
      .refine((e) => !e.enabled || (e.key !== undefined && e.key.length > 0), {
        path: ['key'],
        message: 'is required when encryption is enabled',
      }),
  })
  .prefault({});

/** The parsed `auth.*` section. */
export type AuthConfig = z.output<typeof AuthConfigSchema>;
/** The `auth.*` section as written. */
export type AuthConfigInput = z.input<typeof AuthConfigSchema>;

/** `providers.<p>.quota`, as the credentials package reads it. */
export const ProviderQuotaSchema = z.object({
  limit: z.number().int().nonnegative().optional(),
  reset: ResetScheduleSchema.optional(),
});

/** Options of {@link openCredentials}. */
export interface OpenCredentialsOptions {
  /** `auth-dir` (default `./auths`). */
  authDir?: string;
  /** The `auth.*` section (validated here). */
  auth?: AuthConfigInput;
  /** `providers.<p>`: only `quota.limit` and `quota.reset` are read. */
  providers?: Record<string, ProviderQuotaConfig>;
  /** The config file, to watch for changes (queued as `config.reload`). */
  configFile?: string;
  /** Flows besides the two presets (which are registered with their default endpoints unless given here). */
  flows?: readonly AuthFlow[];
  scheduler?: Scheduler;
  logger?: CredentialsLogger;
  http?: CredentialManagerOptions['http'];
  /**
   * Shared stores to run on instead of the files in `auth-dir` (a cluster's
   * PostgreSQL stores). `close()` then closes the credential and quota
   * stores; the refresh lock and the sign-in directory stay their owner's
   * to close.
   */
  stores?: { store: CredentialStore; quotaStore: QuotaStore; refreshLock?: RefreshLock; signInDirectory?: SignInDirectory };
  /**
   * Where the status of device sign-ins goes, instead of
   * `auth-dir/.sign-ins` (the gateway's): a process that runs its own
   * sign-in beside a gateway on the same `auth-dir`, such as `switchyard
   * login`, passes a `MemorySignInDirectory`, so that its start does not
   * mark the gateway's pending sign-ins as interrupted. Ignored with `stores`.
   */
  signInDirectory?: SignInDirectory;
  /** `cluster.node_id`: names this node as the owner of its sign-ins in a shared `signInDirectory`. */
  nodeId?: string;
  /** How often quota usage is written to the quota store (default 1 s; 0: after every report, still off the request path). */
  quotaFlushIntervalMs?: number;
  /** Write quota usage at once when this many requests' usage is waiting (default: the interval alone decides). */
  quotaFlushBatchSize?: number;
  /** How long an unsettled quota reservation lives in a shared quota store (default 10 minutes; see `QuotaTracker.admit`). */
  quotaReservationTtlMs?: number;
  /** How long an admission waits for a shared quota store before the request goes ahead without a reservation (default 5 s). */
  quotaAdmissionTimeoutMs?: number;
}

/** The manager of {@link openCredentials}, whose `close` also closes its file stores. */
export interface OpenedCredentials {
  manager: CredentialManager;
  /** The credential store in use. */
  store: CredentialStore;
  /** The file store in `auth-dir`, unless `stores` replaced it. */
  fileStore: FileCredentialStore | undefined;
  config: AuthConfig;
  close(): Promise<void>;
}

/**
 * Opens the file store in `auth-dir` (encrypted as `auth.encryption` says),
 * keeps quota usage in `auth-dir/.quota.json` and the status of device
 * sign-ins in `auth-dir/.sign-ins/` (so a restart answers the ones it
 * interrupted), registers the two presets, and starts a manager configured
 * by `auth.*`.
 *
 * @example
 * ```ts
 * const { manager, close } = await openCredentials({
 *   authDir: './auths',
 *   auth: { selection_strategy: 'priority', quota: { reset_schedule: { openai: 'monthly' } } },
 * });
 * const credential = manager.pool('openai').acquire();
 * await close();
 * ```
 */
export async function openCredentials(options: OpenCredentialsOptions = {}): Promise<OpenedCredentials> {
  const parsed = AuthConfigSchema.safeParse(options.auth ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ field: ['auth', ...issue.path.map(String)].join('.'), message: issue.message }));
    throw new CredentialsError('invalid_config', `invalid auth config: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, {
      issues,
    });
  }
  const config = parsed.data;
  const directory = options.authDir ?? './auths';
  const encryption = config.encryption;
  const fileStore = options.stores
    ? undefined
    : await FileCredentialStore.open({
        directory,
        ...(encryption.enabled ? { encryption: { key: encryption.key!, previousKeys: encryption.previous_keys } } : {}),
      });
  const store: CredentialStore = options.stores?.store ?? fileStore!;
  const quotaStore = options.stores?.quotaStore ?? (await FileQuotaStore.open(join(fileStore!.directory, '.quota.json')));
  // A single gateway's sign-ins outlive its restarts here; a cluster brings its shared directory in `stores`. An
  // auth-dir this process may not write to (a read-only mount) still serves: its sign-ins are then kept in memory.
  const ownSignIns =
    fileStore && !options.signInDirectory
      ? await FileSignInDirectory.open(join(fileStore.directory, '.sign-ins')).catch((error: unknown) => {
          options.logger?.warn({ code: (error as CredentialsError).code }, `${(error as Error).message}: sign-ins are kept in memory`);
          return undefined;
        })
      : undefined;
  const signInDirectory = options.stores ? options.stores.signInDirectory : (options.signInDirectory ?? ownSignIns);
  const custom = options.flows ?? [];
  const presets = [codeAssistantFlow(), cloudCodingAssistantFlow()].filter((preset) => !custom.some((f) => f.name === preset.name));
  const manager = new CredentialManager({
    store,
    quotaStore,
    strategy: config.selection_strategy,
    quotaResetSchedule: config.quota.reset_schedule,
    refresh: {
      enabled: config.refresh.enabled,
      checkIntervalMs: config.refresh.check_interval,
      leadTimeMs: config.refresh.refresh_lead_time,
    },
    flows: [...presets, ...custom],
    ...(options.stores?.refreshLock ? { refreshLock: options.stores.refreshLock } : {}),
    ...(signInDirectory ? { signInDirectory } : {}),
    ...(options.nodeId ? { nodeId: options.nodeId } : {}),
    ...(options.quotaFlushIntervalMs === undefined ? {} : { quotaFlushIntervalMs: options.quotaFlushIntervalMs }),
    ...(options.quotaFlushBatchSize === undefined ? {} : { quotaFlushBatchSize: options.quotaFlushBatchSize }),
    ...(options.quotaReservationTtlMs === undefined ? {} : { quotaReservationTtlMs: options.quotaReservationTtlMs }),
    ...(options.quotaAdmissionTimeoutMs === undefined ? {} : { quotaAdmissionTimeoutMs: options.quotaAdmissionTimeoutMs }),
    ...(options.providers ? { providers: options.providers } : {}),
    ...(options.configFile ? { configFile: options.configFile } : {}),
    ...(options.scheduler ? { scheduler: options.scheduler } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.http ? { http: options.http } : {}),
  });
  try {
    await manager.start();
  } catch (error) {
    await store.close();
    await ownSignIns?.close();
    throw error;
  }
  return {
    manager,
    store,
    fileStore,
    config,
    async close() {
      await manager.close();
      await store.close();
      await ownSignIns?.close();
    },
  };
}
