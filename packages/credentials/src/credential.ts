/**
 * @module credential
 * The credential model, validated with zod, and the shapes derived from it:
 * the input of `add` and `update`, and the status record that management
 * APIs return. The status record and {@link redactCredential} are the only
 * views of a credential meant to leave the process, and neither carries a
 * secret.
 */
import { z } from 'zod';
import { CredentialsError, type FieldIssue } from './errors.js';

/** Kinds of credential. */
export const CREDENTIAL_TYPES = ['api_key', 'oauth'] as const;
/** A kind of credential: a static API key, or an OAuth token that is refreshed. */
export type CredentialType = (typeof CREDENTIAL_TYPES)[number];

/** Every credential status. */
export const CREDENTIAL_STATUSES = ['active', 'exhausted', 'expired', 'disabled', 'error'] as const;
/**
 * Where a credential stands: `active` serves requests; `exhausted` is out of
 * quota until its reset; `expired` holds a token past `expires_at` (a refresh
 * revives it); `disabled` was switched off by an operator; `error` could not be
 * read or was rejected upstream (`status_message` says why).
 */
export type CredentialStatus = (typeof CREDENTIAL_STATUSES)[number];

/** True for ids that are safe as one file name: no separators, no control characters, no leading dot. */
export function isSafeCredentialId(id: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this rejects.
  return id.length > 0 && id.length <= 200 && !id.startsWith('.') && !/[/\\\u0000-\u001f\u007f]/.test(id);
}

const idSchema = z
  .string()
  .min(1)
  .max(200)
  .refine(isSafeCredentialId, 'must not start with "." or contain "/", "\\" or control characters');
const providerSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit');
const timestampSchema = z.iso.datetime({ offset: true }).transform((value) => new Date(value).toISOString());
const labelSchema = z.string().max(200);
const tokenCountSchema = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/**
 * A credential's token quota. `limit` null means unlimited; `remaining` is
 * always derived from `limit` and `used`; `period_start` is when the current
 * reset period began (null without a reset schedule).
 */
export const QuotaSchema = z
  .object({
    limit: tokenCountSchema.nullable().default(null),
    used: tokenCountSchema.default(0),
    remaining: z.number().nullable().optional(),
    period_start: timestampSchema.nullable().default(null),
  })
  .transform((quota) => ({ ...quota, remaining: remainingOf(quota.limit, quota.used) }));

/** The quota of a credential. */
export type Quota = z.infer<typeof QuotaSchema>;

/** Remaining tokens under `limit`, never below zero; null when unlimited. */
export function remainingOf(limit: number | null, used: number): number | null {
  return limit === null ? null : Math.max(0, limit - used);
}

/**
 * What an OAuth credential's flow needs to refresh it. `params` are public
 * (a region, a client id); `secrets` are encrypted at rest like the token.
 */
export const OAuthDetailsSchema = z.object({
  /** Name of the registered `AuthFlow` that refreshes the credential. */
  flow: z.string().min(1).max(64),
  params: z.record(z.string(), z.string()).default({}),
  secrets: z.record(z.string(), z.string()).default({}),
});

/** OAuth details of a credential. */
export type OAuthDetails = z.infer<typeof OAuthDetailsSchema>;

const credentialShape = {
  id: idSchema,
  provider: providerSchema,
  type: z.enum(CREDENTIAL_TYPES),
  /** The secret sent upstream. Empty only for a record in status `error` (an unreadable file). */
  token: z.string().max(16_384),
  refresh_token: z.string().min(1).max(16_384).optional(),
  expires_at: timestampSchema.optional(),
  /** Lower is preferred by the `priority` strategy. */
  priority: z.number().int().min(-1_000_000).max(1_000_000).default(0),
  quota: QuotaSchema.default({ limit: null, used: 0, remaining: null, period_start: null }),
  status: z.enum(CREDENTIAL_STATUSES).default('active'),
  status_message: z.string().max(2000).optional(),
  label: labelSchema.optional(),
  oauth: OAuthDetailsSchema.optional(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
  /** Increases by one on every stored change; the store assigns it. */
  revision: z.number().int().nonnegative().default(0),
};

/**
 * A credential, as stored. Validates and normalizes: timestamps become UTC
 * ISO 8601, `quota.remaining` is recomputed, defaults are filled in.
 *
 * @example
 * ```ts
 * const credential = CredentialSchema.parse({
 *   id: 'openai-team', provider: 'openai', type: 'api_key', token: process.env.OPENAI_KEY,
 *   created_at: new Date().toISOString(), updated_at: new Date().toISOString(),
 * });
 * ```
 */
export const CredentialSchema = z.object(credentialShape).superRefine((credential, context) => {
  if (credential.token.length === 0 && credential.status !== 'error') {
    context.addIssue({ code: 'custom', path: ['token'], message: 'must not be empty' });
  }
  if (credential.type === 'api_key') {
    for (const field of ['refresh_token', 'oauth'] as const) {
      if (credential[field] !== undefined) context.addIssue({ code: 'custom', path: [field], message: 'is only allowed for type "oauth"' });
    }
  }
});

/** A credential. */
export type Credential = z.infer<typeof CredentialSchema>;

/**
 * Input of `CredentialManager.add` (the management API's `POST /auths`).
 * `id` is generated when absent; `status` may only start as `active` or
 * `disabled`.
 */
export const NewCredentialSchema = z.strictObject({
  id: idSchema.optional(),
  provider: providerSchema,
  type: z.enum(CREDENTIAL_TYPES),
  token: z.string().min(1).max(16_384),
  refresh_token: z.string().min(1).max(16_384).optional(),
  expires_at: timestampSchema.optional(),
  priority: credentialShape.priority,
  quota: z.strictObject({ limit: tokenCountSchema.nullable() }).optional(),
  status: z.enum(['active', 'disabled']).default('active'),
  label: labelSchema.optional(),
  oauth: OAuthDetailsSchema.optional(),
});

/** Input of `CredentialManager.add`. */
export type NewCredential = z.input<typeof NewCredentialSchema>;

/**
 * Input of `CredentialManager.update` (`PUT /auths/{provider}`): the fields an
 * operator may change. Setting `status` to `active` clears an `error` or
 * `expired` status by hand.
 */
export const CredentialPatchSchema = z.strictObject({
  token: z.string().min(1).max(16_384).optional(),
  refresh_token: z.string().min(1).max(16_384).optional(),
  expires_at: timestampSchema.nullable().optional(),
  priority: z.number().int().min(-1_000_000).max(1_000_000).optional(),
  label: labelSchema.nullable().optional(),
  status: z.enum(['active', 'disabled']).optional(),
  quota: z.strictObject({ limit: tokenCountSchema.nullable() }).optional(),
});

/** Input of `CredentialManager.update`. */
export type CredentialPatch = z.input<typeof CredentialPatchSchema>;

/**
 * Parses `input` with `schema`, or throws a {@link CredentialsError} with code
 * `invalid_credential` naming every failed field. The message never quotes
 * the input, so a mistyped token cannot leak through it.
 */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown, what = 'credential'): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const fieldOf = (path: readonly PropertyKey[]) => (path.length > 0 ? path.map(String).join('.') : '(root)');
  const issues: FieldIssue[] = result.error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: fieldOf([...issue.path, key]), message: 'is not a known field' }))
      : [{ field: fieldOf(issue.path), message: issue.message }],
  );
  const summary = issues.map((i) => `${i.field}: ${i.message}`).join('; ');
  throw new CredentialsError('invalid_credential', `invalid ${what}: ${summary}`, { issues });
}

/** Validates a stored credential (see {@link CredentialSchema}). */
export function parseCredential(input: unknown): Credential {
  return parseWith(CredentialSchema, input);
}

/** A credential's quota view, with when the current period ends. */
export interface QuotaStatus {
  limit: number | null;
  used: number;
  remaining: number | null;
  period_start: string | null;
  /** When `used` next returns to 0 (ISO 8601); null without a reset schedule. */
  resets_at: string | null;
}

/** Why a credential is not being handed out. */
export type UnavailableReason = 'cooldown' | 'disabled' | 'exhausted' | 'expired' | 'error';

/**
 * A credential as management APIs and `status()` show it: everything but
 * the secrets, plus its live state in the pool.
 */
export interface CredentialStatusRecord {
  id: string;
  provider: string;
  type: CredentialType;
  priority: number;
  label: string | null;
  status: CredentialStatus;
  status_message: string | null;
  quota: QuotaStatus;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
  revision: number;
  /** Name of the flow that refreshes it; null for API keys. */
  flow: string | null;
  /** True for an OAuth credential that names the flow that refreshes it. */
  refreshable: boolean;
  available: boolean;
  unavailable_reason: UnavailableReason | null;
  /** When a cooldown ends (ISO 8601). */
  cooldown_until: string | null;
  /** Message of the last failed request (not a status: the credential stays usable). */
  last_error: string | null;
  /** Requests handed this credential since start. */
  requests: number;
  last_used_at: string | null;
}

/**
 * A credential without its secrets, for logs and debugging: `token`,
 * `refresh_token` and `oauth.secrets` are replaced by whether they are set.
 *
 * @example
 * ```ts
 * logger.info({ credential: redactCredential(credential) }, 'credential loaded');
 * ```
 */
export function redactCredential(credential: Credential): Omit<Credential, 'token' | 'refresh_token' | 'oauth'> & {
  has_token: boolean;
  has_refresh_token: boolean;
  oauth?: { flow: string; params: Record<string, string>; secrets: string[] };
} {
  const { token, refresh_token, oauth, ...rest } = credential;
  return {
    ...rest,
    has_token: token.length > 0,
    has_refresh_token: refresh_token !== undefined,
    ...(oauth ? { oauth: { flow: oauth.flow, params: oauth.params, secrets: Object.keys(oauth.secrets) } } : {}),
  };
}

/** The secret-free part of a status record that comes from the stored credential alone. */
export function describeCredential(
  credential: Credential,
): Omit<
  CredentialStatusRecord,
  'available' | 'unavailable_reason' | 'cooldown_until' | 'requests' | 'last_used_at' | 'last_error' | 'quota'
> {
  return {
    id: credential.id,
    provider: credential.provider,
    type: credential.type,
    priority: credential.priority,
    label: credential.label ?? null,
    status: credential.status,
    status_message: credential.status_message ?? null,
    expires_at: credential.expires_at ?? null,
    created_at: credential.created_at,
    updated_at: credential.updated_at,
    revision: credential.revision,
    flow: credential.oauth?.flow ?? null,
    refreshable: credential.type === 'oauth' && credential.oauth !== undefined,
  };
}
