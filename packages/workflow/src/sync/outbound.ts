/**
 * @module outbound
 * Every call the sync adapters make (code host, trackers, their token
 * endpoints) goes through one SSRF guard: runtime's connect-time lookup
 * check, so a configured host that resolves, or later re-resolves, to a
 * private, loopback or metadata address is refused before a byte leaves.
 * Hosts the operator names in `allowPrivateHosts` (a GitHub Enterprise on
 * the office network, a fake on 127.0.0.1 in tests) are let through.
 */
import { assertCallableUrl, guardedLookup, type LookupFunction, SsrfBlocked } from '@switchyard/runtime/ssrf';
import { Agent, type Dispatcher, fetch as undiciFetch } from 'undici';
import { InvalidArgumentError, WorkflowError } from '../errors.js';

/** What outbound calls may reach. */
export interface OutboundPolicy {
  /** Host names or IP addresses allowed although they are private or loopback. */
  allowPrivateHosts?: readonly string[];
  /** The resolver (tests stage DNS answers with it). */
  resolve?: LookupFunction;
}

/** The guarded dispatcher for a policy: addresses are vetted at connect time. */
export function guardedDispatcher(policy: OutboundPolicy = {}): Dispatcher {
  return new Agent({ connect: { lookup: guardedLookup({ allow: policy.allowPrivateHosts ?? [] }, policy.resolve) } });
}

/**
 * Checks a configured URL up front (http or https, no credentials in it, a
 * literal private IP only when allowed) and returns it without a trailing slash.
 */
export function checkedBaseUrl(field: string, url: string, policy: OutboundPolicy = {}): string {
  let parsed: URL;
  try {
    parsed = assertCallableUrl(url, { allow: policy.allowPrivateHosts ?? [] });
  } catch (error) {
    throw new InvalidArgumentError(field, (error as Error).message, { cause: error });
  }
  if (parsed.username !== '' || parsed.password !== '') throw new InvalidArgumentError(field, 'credentials do not belong in the URL');
  return parsed.toString().replace(/\/$/, '');
}

/** A `fetch` that goes through the guarded dispatcher (for SDKs that take a fetch). */
export function guardedFetch(dispatcher: Dispatcher): typeof globalThis.fetch {
  const guarded = (input: Parameters<typeof undiciFetch>[0], init?: Parameters<typeof undiciFetch>[1]) =>
    undiciFetch(input, { ...init, dispatcher }).catch((error: unknown) => {
      throw blockedAsWorkflowError(error) ?? error;
    });
  return guarded as unknown as typeof globalThis.fetch;
}

/** A refused destination as a workflow error (`forbidden`), or undefined for any other failure. */
export function blockedAsWorkflowError(error: unknown): WorkflowError | undefined {
  let cause: unknown = error;
  for (let depth = 0; cause && depth < 5; depth++) {
    if (cause instanceof SsrfBlocked || (cause as { code?: unknown }).code === 'SSRF_BLOCKED') {
      return new WorkflowError('forbidden', (cause as Error).message, { cause: error, details: { reason: 'ssrf_blocked' } });
    }
    cause = (cause as { cause?: unknown }).cause;
  }
  return undefined;
}
