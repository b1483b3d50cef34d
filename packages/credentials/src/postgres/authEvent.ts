/**
 * @module authEvent
 * The payload of the cross-node auth event bus (channel
 * `svc_auth_events_v1`), as a zod schema shared by the publisher and the
 * consumer. Events carry metadata only, never a secret: a node that hears
 * one re-reads the credential from the shared store. NOTIFY refuses
 * payloads of 8,000 bytes or more; every field is bounded so an event stays
 * far below that, and the publisher checks anyway.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { CredentialsError } from '../errors.js';

/** The default channel of the auth event bus. */
export const DEFAULT_AUTH_EVENTS_CHANNEL = 'svc_auth_events_v1';
/** The payload version this package emits and accepts. */
export const AUTH_EVENT_SCHEMA_VERSION = 1;
/** NOTIFY's limit is 8,000 bytes, exclusive. */
export const MAX_AUTH_EVENT_BYTES = 7999;

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A new ULID: 48 bits of milliseconds and 80 random bits, in Crockford base32
 * (26 characters, sortable by time).
 *
 * @example
 * ```ts
 * newUlid(); // '01JD3W5Y6ZK8Q9V0T1R2S3M4N5'
 * ```
 */
export function newUlid(now: number = Date.now()): string {
  let time = '';
  let ms = Math.max(0, Math.floor(now));
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[ms % 32] + time;
    ms = Math.floor(ms / 32);
  }
  const random = randomBytes(16);
  let tail = '';
  for (let i = 0; i < 16; i++) tail += CROCKFORD[random[i]! % 32];
  return time + tail;
}

const text = (max: number) => z.string().min(1).max(max);

const OriginSchema = z.object({
  node_id: text(200),
  instance_id: text(200),
  /** Which credential store the publishing node runs. */
  backend_mode: z.enum(['file', 'git', 'postgres', 'object']),
});

const CorrelationSchema = z.object({
  request_id: z.string().max(200).nullable(),
  actor: z.string().max(200).nullable(),
});

const common = {
  schema_version: z.literal(AUTH_EVENT_SCHEMA_VERSION),
  event_id: z.string().refine((id) => ULID.test(id) || UUID.test(id), 'must be a ULID or a UUID'),
  occurred_at: z.iso.datetime({ offset: true }),
  origin: OriginSchema,
  correlation: CorrelationSchema,
};

/** A credential was created, changed or deleted. */
export const AuthChangeEventSchema = z.object({
  ...common,
  event_type: z.enum(['auth.upsert', 'auth.delete']),
  subject: z.object({ auth_id: text(200), provider: text(64), tenant_id: text(64) }),
  mutation: z.object({
    // Optional, as the specification has it: without one, the event is checked against the store's revision only.
    revision: z.number().int().positive().optional(),
    kind: z.enum(['create', 'update', 'delete']),
    reason: z.string().max(200),
  }),
});

/** A node asks every node to reload its configuration. */
export const ConfigReloadEventSchema = z.object({
  ...common,
  event_type: z.literal('config.reload'),
  subject: z.object({ auth_id: z.null(), provider: z.null(), tenant_id: text(64) }),
  mutation: z.object({ revision: z.null().optional(), kind: z.literal('reload'), reason: z.string().max(200) }),
});

/**
 * Any event on the bus.
 *
 * @example
 * ```ts
 * const result = AuthEventSchema.safeParse(JSON.parse(payload));
 * if (result.success && result.data.event_type === 'auth.upsert') console.log(result.data.subject.auth_id);
 * ```
 */
export const AuthEventSchema = z.discriminatedUnion('event_type', [AuthChangeEventSchema, ConfigReloadEventSchema]);

export type AuthChangeEvent = z.infer<typeof AuthChangeEventSchema>;
export type ConfigReloadEvent = z.infer<typeof ConfigReloadEventSchema>;
export type AuthEvent = z.infer<typeof AuthEventSchema>;
export type AuthEventOrigin = z.infer<typeof OriginSchema>;

/** Who caused a change, carried in `correlation` (and `mutation.reason`). Longer strings are cut to 200 characters. */
export interface AuthEventCorrelation {
  request_id?: string | null;
  actor?: string | null;
  /** Why, in a few words (`management api`, `refresh`); default `store write`. */
  reason?: string;
}

const cut = (value: string | null | undefined) => (value == null ? null : value.slice(0, 200));

/** The `correlation` block and `mutation.reason` of an event. */
export function correlationFields(correlation: AuthEventCorrelation | undefined): {
  correlation: AuthEvent['correlation'];
  reason: string;
} {
  return {
    correlation: { request_id: cut(correlation?.request_id), actor: cut(correlation?.actor) },
    reason: cut(correlation?.reason) ?? 'store write',
  };
}

/** Serializes an event, refusing one NOTIFY would refuse (`headroom` keeps bytes free for fields filled in by SQL). */
export function encodeAuthEvent(event: AuthEvent, headroom = 0): string {
  const payload = JSON.stringify(event);
  if (Buffer.byteLength(payload) + headroom > MAX_AUTH_EVENT_BYTES) {
    throw new CredentialsError('invalid_argument', `an auth event must stay under 8,000 bytes (this one is ${Buffer.byteLength(payload)})`);
  }
  return payload;
}

/**
 * Reads a payload heard on the channel: the event, or why it is invalid
 * (the reason names the field, never its value).
 */
export function decodeAuthEvent(payload: string): { event: AuthEvent } | { reason: string } {
  if (Buffer.byteLength(payload) > MAX_AUTH_EVENT_BYTES) return { reason: 'payload too large' };
  let json: unknown;
  try {
    json = JSON.parse(payload);
  } catch {
    return { reason: 'not JSON' };
  }
  const result = AuthEventSchema.safeParse(json);
  if (result.success) return { event: result.data };
  const issue = result.error.issues[0];
  return { reason: `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}` };
}
