/**
 * @module @switchyard/workflow/sync
 * Webhook signing the way each tracker signs (to test a webhook endpoint
 * end to end), signature checks, the default tracker state mapping, and
 * the GitHub device-flow token file.
 * The sync engine, the adapters and the webhook verifiers an embedder
 * configures are on the package root.
 *
 * @example
 * ```ts
 * import { signLinearDelivery } from '@switchyard/workflow/sync';
 * const body = JSON.stringify({ action: 'update', type: 'Issue', data: { id: 'ISS-1' } });
 * const headers = signLinearDelivery(secret, 'delivery-1', body);
 * ```
 */

export { DEFAULT_STATE_MAPPING } from './sync/adapters.js';
export { readDeviceToken, type StoredDeviceToken } from './sync/github/githubAuth.js';
export {
  LINEAR_TOLERANCE_MS,
  type RawDelivery,
  type SignedDelivery,
  signDelivery,
  signLinearDelivery,
  signPlaneDelivery,
  verifySignature,
  WEBHOOK_TOLERANCE_MS,
} from './sync/webhooks.js';
