/**
 * @module webhooks
 * Verifying tracker deliveries, one verifier per tracker. Each checks the
 * signature over the raw body with `timingSafeEqual` on equal-length
 * digests before reading anything, then the freshness the tracker allows
 * for, and returns the delivery id (which the sync engine de-duplicates)
 * and the issue the delivery is about. The sync engine reads the issue
 * back from the tracker's API before acting, so a payload is a signal, not
 * a source of truth.
 *
 * - custom REST: `x-switchyard-signature: sha256=<hex>` over
 *   `<timestamp>.<delivery id>.<body>`, timestamp within 5 minutes.
 * - Linear: `Linear-Signature: <hex>` over the body, the body's
 *   `webhookTimestamp` (ms) within 60 s, `Linear-Delivery` the id.
 * - Plane: `X-Plane-Signature: <hex>` over the body, `X-Plane-Delivery`
 *   the id. Plane signs no timestamp, so replay protection is the id.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidArgumentError, WorkflowError } from '../errors.js';

/** The default (and largest) webhook timestamp window: 5 minutes. */
export const WEBHOOK_TOLERANCE_MS = 300_000;
/** Linear's window for `webhookTimestamp`, as Linear's documentation sets it. */
export const LINEAR_TOLERANCE_MS = 60_000;

/** A delivery whose signature verified. */
export interface VerifiedDelivery {
  /** The sender's delivery id, as sent. */
  deliveryId: string;
  /** The id the engine de-duplicates on (namespaced per tracker). */
  dedupKey: string;
  /** The issue the delivery is about; absent for events about anything else. */
  issue?: { id: string; title?: string; description?: string; state?: string };
}

/** What a raw delivery is. */
export interface RawDelivery {
  headers: Record<string, string | string[] | undefined>;
  rawBody: Uint8Array;
}

/** Verifies one tracker's deliveries. */
export interface WebhookVerifier {
  readonly kind: 'custom' | 'linear' | 'plane';
  /** Throws `signature_invalid` (bad signature, stale timestamp) or `invalid_argument` (no id, not JSON). */
  verify(delivery: RawDelivery, nowMs: number): VerifiedDelivery;
}

function header(headers: RawDelivery['headers'], name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** Timing-safe comparison of a hex digest header with the expected digest; a malformed header is refused unread. */
function assertHexMac(expected: Buffer, given: string | undefined): void {
  if (!given || !/^[0-9a-fA-F]{64}$/.test(given) || !timingSafeEqual(Buffer.from(given, 'hex'), expected))
    throw new WorkflowError('signature_invalid', 'the webhook signature does not verify');
}

function parseJson(rawBody: Uint8Array): Record<string, unknown> {
  try {
    const value = JSON.parse(Buffer.from(rawBody).toString('utf8'));
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch (error) {
    throw new InvalidArgumentError('body', 'not JSON', { cause: error });
  }
  throw new InvalidArgumentError('body', 'not a JSON object');
}

function deliveryIdFrom(value: string | undefined, headerName: string): string {
  if (!value || !/^[A-Za-z0-9_.:-]{1,200}$/.test(value))
    throw new InvalidArgumentError('delivery_id', `missing or malformed ${headerName} header`);
  return value;
}

const hmac = (secret: string, ...parts: (string | Uint8Array)[]) => {
  const mac = createHmac('sha256', secret);
  for (const part of parts) mac.update(part);
  return mac.digest();
};

// ---- custom REST ----

/** What a custom-REST webhook signature covers. */
export interface SignedDelivery {
  /** Unix seconds, as sent in the timestamp header. */
  timestamp: string;
  deliveryId: string;
  body: Uint8Array | string;
}

/**
 * Checks `sha256=<hex>` against HMAC-SHA256(secret, `<timestamp>.<delivery id>.<body>`) with
 * `timingSafeEqual` on equal-length digests. The timestamp and the id are signed so that a
 * captured delivery can neither be sent again under a new id nor kept back until its id is forgotten.
 *
 * @example
 * ```ts
 * verifySignature(secret, { timestamp: '1767225600', deliveryId: 'd-1', body }, req.headers['x-switchyard-signature']);
 * ```
 */
export function verifySignature(secret: string, delivery: SignedDelivery, signature: string | undefined): void {
  const match = /^sha256=(.*)$/.exec(signature ?? '');
  assertHexMac(hmac(secret, `${delivery.timestamp}.${delivery.deliveryId}.`, delivery.body), match?.[1]);
}

/**
 * The headers of a delivery signed the way {@link verifySignature} expects (for senders and tests).
 *
 * @example
 * ```ts
 * const headers = signDelivery(secret, { deliveryId: 'd-1', body, timestamp: String(Math.floor(Date.now() / 1000)) });
 * ```
 */
export function signDelivery(secret: string, delivery: SignedDelivery): Record<string, string> {
  return {
    'x-switchyard-signature': `sha256=${hmac(secret, `${delivery.timestamp}.${delivery.deliveryId}.`, delivery.body).toString('hex')}`,
    'x-switchyard-delivery': delivery.deliveryId,
    'x-switchyard-timestamp': delivery.timestamp,
  };
}

/** Options of {@link customWebhookVerifier}. */
export interface CustomWebhookOptions {
  secret: string;
  signatureHeader?: string;
  deliveryHeader?: string;
  timestampHeader?: string;
  /** At most {@link WEBHOOK_TOLERANCE_MS}. */
  toleranceMs?: number;
}

/** The custom REST tracker's deliveries: `{ "issue": { "id", "title", "description", "state" } }`. */
export function customWebhookVerifier(options: CustomWebhookOptions): WebhookVerifier {
  const tolerance = Math.min(options.toleranceMs ?? WEBHOOK_TOLERANCE_MS, WEBHOOK_TOLERANCE_MS);
  return {
    kind: 'custom',
    verify({ headers, rawBody }, now) {
      const deliveryId = header(headers, options.deliveryHeader ?? 'x-switchyard-delivery');
      const timestamp = header(headers, options.timestampHeader ?? 'x-switchyard-timestamp');
      verifySignature(
        options.secret,
        { timestamp: timestamp ?? '', deliveryId: deliveryId ?? '', body: rawBody },
        header(headers, options.signatureHeader ?? 'x-switchyard-signature'),
      );
      const id = deliveryIdFrom(deliveryId, 'delivery id');
      const sent = timestamp !== undefined && /^\d{1,12}$/.test(timestamp) ? Number(timestamp) * 1000 : Number.NaN;
      if (!(Math.abs(now - sent) <= tolerance))
        throw new WorkflowError('signature_invalid', `the webhook timestamp is missing or more than ${tolerance / 1000} s from now`, {
          details: { field: 'timestamp' },
        });
      const issue = (parseJson(rawBody).issue ?? undefined) as Record<string, unknown> | undefined;
      const text = (v: unknown) => (v === undefined || v === null ? '' : String(v));
      return {
        deliveryId: id,
        dedupKey: id,
        ...(issue && (typeof issue.id === 'string' || typeof issue.id === 'number')
          ? { issue: { id: String(issue.id), title: text(issue.title), description: text(issue.description), state: text(issue.state) } }
          : {}),
      };
    },
  };
}

// ---- Linear ----

/**
 * Linear's deliveries: `Linear-Signature` is the hex HMAC-SHA256 of the raw
 * body, the signed body's `webhookTimestamp` (Unix ms) must be within 60 s,
 * `Linear-Delivery` is the delivery's UUID. Issue events (`type: "Issue"`) name the issue in `data.id`.
 */
export function linearWebhookVerifier(secret: string): WebhookVerifier {
  return {
    kind: 'linear',
    verify({ headers, rawBody }, now) {
      assertHexMac(hmac(secret, rawBody), header(headers, 'linear-signature'));
      const id = deliveryIdFrom(header(headers, 'linear-delivery'), 'Linear-Delivery');
      const payload = parseJson(rawBody);
      const sent = payload.webhookTimestamp;
      if (typeof sent !== 'number' || !Number.isFinite(sent) || Math.abs(now - sent) > LINEAR_TOLERANCE_MS)
        throw new WorkflowError('signature_invalid', 'the webhookTimestamp is missing or more than 60 s from now', {
          details: { field: 'webhookTimestamp' },
        });
      const data = payload.data as { id?: unknown } | undefined;
      const isIssue = payload.type === 'Issue' && typeof data?.id === 'string';
      return { deliveryId: id, dedupKey: `linear:${id}`, ...(isIssue ? { issue: { id: data!.id as string } } : {}) };
    },
  };
}

/** Signs a Linear-shaped delivery (for tests and for replaying one by hand). */
export function signLinearDelivery(secret: string, deliveryId: string, body: string | Uint8Array): Record<string, string> {
  return { 'linear-signature': hmac(secret, body).toString('hex'), 'linear-delivery': deliveryId, 'linear-event': 'Issue' };
}

// ---- Plane ----

/**
 * Plane's deliveries: `X-Plane-Signature` is the hex HMAC-SHA256 of the raw
 * body, `X-Plane-Delivery` the delivery's UUID. Issue (work item) events
 * (`event: "issue"`) name the item in `data.id`.
 */
export function planeWebhookVerifier(secret: string): WebhookVerifier {
  return {
    kind: 'plane',
    verify({ headers, rawBody }) {
      assertHexMac(hmac(secret, rawBody), header(headers, 'x-plane-signature'));
      const id = deliveryIdFrom(header(headers, 'x-plane-delivery'), 'X-Plane-Delivery');
      const payload = parseJson(rawBody);
      const data = payload.data as { id?: unknown } | undefined;
      const isItem = (payload.event === 'issue' || payload.event === 'work_item') && typeof data?.id === 'string';
      return { deliveryId: id, dedupKey: `plane:${id}`, ...(isItem ? { issue: { id: data!.id as string } } : {}) };
    },
  };
}

/** Signs a Plane-shaped delivery (for tests). */
export function signPlaneDelivery(secret: string, deliveryId: string, body: string | Uint8Array): Record<string, string> {
  return { 'x-plane-signature': hmac(secret, body).toString('hex'), 'x-plane-delivery': deliveryId, 'x-plane-event': 'issue' };
}
