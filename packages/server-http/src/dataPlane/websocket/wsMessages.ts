/**
 * @module wsMessages
 * The messages of the websocket routes, as zod schemas, and the messages
 * the gateway sends back. A client message is a JSON object with a `type`;
 * the credential messages are checked field by field, and a refusal names
 * the fields at fault but never quotes what was sent (a mistyped token must
 * not come back in an error, nor reach a log).
 */
import { NewCredentialSchema } from '@switchyard/credentials';
import { z } from 'zod';

/** A client's correlation id, echoed on every message answering it. */
export const WsRequestIdSchema = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/, '1-128 of A-Z a-z 0-9 . _ : -');

/** The credential of an `auth.upsert`: the fields of `POST /v0/management/auths` that a runtime update may set. */
export const WsCredentialSchema = NewCredentialSchema.pick({ id: true, provider: true, type: true, token: true, priority: true });

/** `{type: "auth.upsert", request_id?, credential}`: adds a credential, or replaces the one with that id. */
export const AuthUpsertMessageSchema = z.strictObject({
  type: z.literal('auth.upsert'),
  request_id: WsRequestIdSchema.optional(),
  credential: WsCredentialSchema,
});

/** `{type: "auth.delete", request_id?, id}`: deletes a credential. */
export const AuthDeleteMessageSchema = z.strictObject({
  type: z.literal('auth.delete'),
  request_id: WsRequestIdSchema.optional(),
  id: NewCredentialSchema.shape.id.unwrap(),
});

/**
 * `{type: "response.create", request_id?, ...}`: the other fields are a
 * Responses request body, as `POST /v1/responses` takes it (`stream` is
 * implied).
 */
export const ResponseCreateMessageSchema = z.looseObject({
  type: z.literal('response.create'),
  request_id: WsRequestIdSchema.optional(),
});

/** An `auth.upsert` message. */
export type AuthUpsertMessage = z.infer<typeof AuthUpsertMessageSchema>;
/** An `auth.delete` message. */
export type AuthDeleteMessage = z.infer<typeof AuthDeleteMessageSchema>;

/** The message types a client may send; anything else is `unknown_type`. */
export const CLIENT_MESSAGE_TYPES = ['response.create', 'auth.upsert', 'auth.delete'] as const;
/** One of {@link CLIENT_MESSAGE_TYPES}. */
export type ClientMessageType = (typeof CLIENT_MESSAGE_TYPES)[number];

/** Codes of the `error` messages the gateway sends for a client message it refuses. */
export type WsErrorCode =
  | 'invalid_json'
  | 'invalid_message'
  | 'unknown_type'
  | 'unsupported_type'
  | 'management_key_required'
  | 'management_key_revoked'
  | 'too_many_requests'
  | 'internal'
  // The credentials package's own codes pass through (credential_not_found, invalid_credential, …).
  | (string & {});

/** What a client message came to when read: the message, or the error to answer with. */
export type ReadMessage =
  | { ok: true; type: ClientMessageType; requestId: string | undefined; fields: Record<string, unknown> }
  | { ok: false; requestId: string | undefined; code: WsErrorCode; message: string; param?: string };

/** The request id of a message, when it carries a valid one (so that even a refusal can be correlated). */
function requestIdOf(fields: Record<string, unknown>): string | undefined {
  const parsed = WsRequestIdSchema.safeParse(fields.request_id);
  return parsed.success ? parsed.data : undefined;
}

/** Parses a text frame: JSON, an object, a known `type`. */
export function readMessage(text: string): ReadMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, requestId: undefined, code: 'invalid_json', message: 'the message is not valid JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, requestId: undefined, code: 'invalid_message', message: 'a message must be a JSON object with a type' };
  }
  const fields = parsed as Record<string, unknown>;
  const requestId = requestIdOf(fields);
  if (typeof fields.type !== 'string') {
    return { ok: false, requestId, code: 'invalid_message', message: 'type is required and must be a string', param: 'type' };
  }
  if (!(CLIENT_MESSAGE_TYPES as readonly string[]).includes(fields.type)) {
    return {
      ok: false,
      requestId,
      code: 'unknown_type',
      message: `unknown message type ${JSON.stringify(fields.type.slice(0, 64))}; expected one of ${CLIENT_MESSAGE_TYPES.join(', ')}`,
      param: 'type',
    };
  }
  return { ok: true, type: fields.type as ClientMessageType, requestId, fields };
}

/**
 * Checks `fields` against `schema`; the refusal lists each failed field and
 * zod's message for it, never the value.
 */
export function validateMessage<S extends z.ZodType>(
  schema: S,
  fields: Record<string, unknown>,
): { ok: true; value: z.output<S> } | { ok: false; message: string; param: string } {
  const result = schema.safeParse(fields);
  if (result.success) return { ok: true, value: result.data };
  const problems = result.error.issues.map((issue) => {
    const path = issue.path.join('.');
    const keys = issue.code === 'unrecognized_keys' ? ` (${issue.keys.map((k) => k.slice(0, 64)).join(', ')})` : '';
    return { path: path || '(message)', text: `${path || '(message)'}: ${issue.message}${keys}` };
  });
  return { ok: false, message: problems.map((p) => p.text).join('; '), param: problems[0]!.path };
}

/** `{type: "error", request_id?, error: {code, message, param?}}`. */
export function errorMessage(requestId: string | undefined, code: WsErrorCode, message: string, param?: string): string {
  return JSON.stringify({
    type: 'error',
    ...(requestId === undefined ? {} : { request_id: requestId }),
    error: { code, message, ...(param === undefined ? {} : { param }) },
  });
}

/** `{type: "auth.ack", request_id?, id, revision}`: the update is applied. */
export function ackMessage(requestId: string | undefined, id: string, revision: number | null): string {
  return JSON.stringify({ type: 'auth.ack', ...(requestId === undefined ? {} : { request_id: requestId }), id, revision });
}
