/**
 * @module ssrf
 * The SSRF guard lives in `@switchyard/runtime/ssrf` (the workflow's code
 * host and tracker calls use it too); this module re-exports it and adds the
 * undici dispatcher the gateway's own calls on a caller's behalf go through.
 */
import { guardedLookup, type LookupFunction, type SsrfPolicy } from '@switchyard/runtime/ssrf';
import { Agent } from 'undici';

export {
  assertCallableUrl,
  assertDestinationAllowed,
  type BlockedRange,
  blockedRange,
  type DestinationCheckOptions,
  guardedLookup,
  type LookupFunction,
  SsrfBlocked,
  type SsrfPolicy,
} from '@switchyard/runtime/ssrf';

/**
 * An undici dispatcher for calls on a caller's behalf: addresses are vetted
 * at connect time and redirects are not followed.
 *
 * @example
 * ```ts
 * const agent = guardedAgent({ allow: ['models.internal.example'] });
 * await undici.request(url, { dispatcher: agent });
 * ```
 */
export function guardedAgent(policy: SsrfPolicy, resolve?: LookupFunction): Agent {
  return new Agent({ connect: { lookup: guardedLookup(policy, resolve) } });
}
