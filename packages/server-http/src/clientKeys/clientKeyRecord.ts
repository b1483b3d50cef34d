/**
 * @module clientKeyRecord
 * What a runtime client key is: its stored record (never the secret, only
 * its SHA-256 digest), the zod schemas of the management API's bodies, the
 * public view the API and the CLI show, and how a secret is made and
 * digested. One definition serves the file store, the PostgreSQL store, the
 * guard on the data plane and the routes.
 */
import { randomBytes } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import { keyDigest } from '@switchyard/http-kit';

/** Every runtime key's secret starts with this, so a leaked one is recognisable (secret scanners) and never taken for a config key. */
export const CLIENT_KEY_PREFIX = 'sk-sy-';

/** The secret's random part: 32 bytes, base64url (256 bits: a digest lookup needs no salt or slow hash). */
const SECRET_BYTES = 32;

/** A fresh secret: `sk-sy-` and 43 base64url characters. Shown once, at creation. */
export function newClientKeySecret(): string {
  return `${CLIENT_KEY_PREFIX}${randomBytes(SECRET_BYTES).toString('base64url')}`;
}

/**
 * The stored form of a secret: its SHA-256, hex, the digest static keys are found by too (http-kit's
 * `keyDigest`). The secret has 256 random bits, so a plain digest cannot be reversed.
 */
export function secretDigest(secret: string): string {
  return keyDigest(secret);
}

/** A fresh key id (`ck_` and 16 hex characters): stable for the key's life, what events and usage name. */
export function newClientKeyId(): string {
  return `ck_${randomBytes(8).toString('hex')}`;
}

/** How a budget is counted: tokens (input + output), requests, or cost in the prices' currency (`cost_per_1k_tokens`). */
export const BUDGET_UNITS = ['tokens', 'requests', 'cost'] as const;
export type BudgetUnit = (typeof BUDGET_UNITS)[number];

/** Budget periods; both start at UTC midnight (the first of the month for `monthly`). */
export const BUDGET_PERIODS = ['daily', 'monthly'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** Cost is kept in millionths of the prices' currency, so every store adds whole numbers. */
export const COST_SCALE = 1_000_000;

const name = z.string().trim().min(1).max(128);
const tenant = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : -');
const modelPattern = z.string().min(1).max(256);

/** A key's budget: `limit` units per `period`. */
export const BudgetSchema = z
  .strictObject({
    limit: z.number().positive().max(1e15).openapi({ example: 100000 }),
    unit: z.enum(BUDGET_UNITS).openapi({ description: 'tokens (in + out), requests, or cost in the currency of cost_per_1k_tokens' }),
    period: z.enum(BUDGET_PERIODS).openapi({ description: 'resets at 00:00 UTC each day, or on the 1st of each month at 00:00 UTC' }),
  })
  .openapi('ClientKeyBudget');
export type Budget = z.infer<typeof BudgetSchema>;

/** The limits a key may carry; each absent or null is no limit. */
const limitFields = {
  models: z
    .array(modelPattern)
    .max(1000)
    .nullable()
    .openapi({ description: 'Model names and globs (`*`, `?`) the key may use; null or absent: every model', example: ['gpt-4o*'] }),
  requests_per_minute: z.number().int().positive().max(1e9).nullable(),
  tokens_per_minute: z.number().int().positive().max(1e12).nullable(),
  budget: BudgetSchema.nullable(),
  expires_at: z.iso.datetime({ offset: true }).nullable().openapi({ description: 'ISO 8601; after it the key is refused (key_expired)' }),
};

/** `POST /v0/management/client-keys`. */
export const CreateClientKeySchema = z
  .strictObject({
    name,
    tenant: tenant.default('default'),
    models: limitFields.models.default(null),
    requests_per_minute: limitFields.requests_per_minute.default(null),
    tokens_per_minute: limitFields.tokens_per_minute.default(null),
    budget: limitFields.budget.default(null),
    expires_at: limitFields.expires_at.default(null),
  })
  .openapi('ClientKeyCreate');

/** `PATCH /v0/management/client-keys/{id}`: the fields to change (null clears a limit). */
export const UpdateClientKeySchema = z
  .strictObject({
    name: name.optional(),
    tenant: tenant.optional(),
    models: limitFields.models.optional(),
    requests_per_minute: limitFields.requests_per_minute.optional(),
    tokens_per_minute: limitFields.tokens_per_minute.optional(),
    budget: limitFields.budget.optional(),
    expires_at: limitFields.expires_at.optional(),
  })
  .openapi('ClientKeyUpdate');
export type ClientKeyUpdate = z.infer<typeof UpdateClientKeySchema>;

/** What a store keeps of a key. `secret_digest` never leaves the stores and the guard. */
export const ClientKeyRecordSchema = z.strictObject({
  id: z.string().regex(/^ck_[0-9a-f]{16}$/),
  name,
  tenant,
  secret_digest: z.string().regex(/^[0-9a-f]{64}$/),
  /** The secret's first characters (`sk-sy-AbC…`), so an operator can tell keys apart; 4 random characters reveal nothing usable. */
  hint: z.string().max(16),
  models: z.array(modelPattern).nullable(),
  requests_per_minute: z.number().int().positive().nullable(),
  tokens_per_minute: z.number().int().positive().nullable(),
  budget: BudgetSchema.nullable(),
  expires_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked: z.boolean(),
  revoked_at: z.string().nullable(),
});
export type ClientKeyRecord = z.infer<typeof ClientKeyRecordSchema>;

/** A key as the API shows it: the record without its digest, with the budget's current period. */
export const ClientKeyViewSchema = ClientKeyRecordSchema.omit({ secret_digest: true })
  .extend({
    budget_use: z
      .object({
        used: z.number().openapi({ description: 'Units used in the current period (cost in the prices’ currency)' }),
        period_start: z.string(),
        resets_at: z.string(),
      })
      .nullable(),
  })
  .openapi('ClientKey');
export type ClientKeyView = z.infer<typeof ClientKeyViewSchema>;

/** The record a create body makes, with its new secret. */
export function createRecord(body: z.infer<typeof CreateClientKeySchema>, now: number): { record: ClientKeyRecord; secret: string } {
  const secret = newClientKeySecret();
  const at = new Date(now).toISOString();
  return {
    secret,
    record: {
      id: newClientKeyId(),
      name: body.name,
      tenant: body.tenant,
      secret_digest: secretDigest(secret),
      hint: `${secret.slice(0, CLIENT_KEY_PREFIX.length + 4)}…`,
      models: body.models,
      requests_per_minute: body.requests_per_minute,
      tokens_per_minute: body.tokens_per_minute,
      budget: body.budget,
      expires_at: body.expires_at === null ? null : new Date(body.expires_at).toISOString(),
      created_at: at,
      updated_at: at,
      last_used_at: null,
      revoked: false,
      revoked_at: null,
    },
  };
}

/** `record` with `update` applied. */
export function applyUpdate(record: ClientKeyRecord, update: ClientKeyUpdate, now: number): ClientKeyRecord {
  const next: ClientKeyRecord = { ...record, updated_at: new Date(now).toISOString() };
  if (update.name !== undefined) next.name = update.name;
  if (update.tenant !== undefined) next.tenant = update.tenant;
  if (update.models !== undefined) next.models = update.models;
  if (update.requests_per_minute !== undefined) next.requests_per_minute = update.requests_per_minute;
  if (update.tokens_per_minute !== undefined) next.tokens_per_minute = update.tokens_per_minute;
  if (update.budget !== undefined) next.budget = update.budget;
  if (update.expires_at !== undefined) next.expires_at = update.expires_at === null ? null : new Date(update.expires_at).toISOString();
  return next;
}

/** A budget's limit in the units the stores count (cost in millionths). */
export function budgetLimitUnits(budget: Budget): number {
  return budget.unit === 'cost' ? Math.round(budget.limit * COST_SCALE) : Math.floor(budget.limit);
}

/** Stored units back to the budget's own (cost to the currency). */
export function budgetUnitsToAmount(budget: Budget, units: number): number {
  return budget.unit === 'cost' ? units / COST_SCALE : units;
}
