/**
 * @module errors
 * One base error for the package, with a stable snake_case `code` that the
 * servers map to HTTP statuses in one table.
 */

/** Codes of {@link RoutingError}. */
export type RoutingErrorCode =
  | 'all_providers_in_cooldown'
  | 'no_provider_available'
  | 'provider_not_found'
  | 'invalid_argument'
  | 'invalid_config'
  | 'invalid_request'
  | 'unsupported_translation'
  /** A provider's answer that cannot be carried to the client's family. */
  | 'invalid_response'
  | 'timeout'
  /** A shared store (PostgreSQL) could not read, write or migrate. */
  | 'store_failed'
  /** The component is closed. */
  | 'closed';

/** Base error of `@switchyard/core-routing`. */
export class RoutingError extends Error {
  override name = 'RoutingError';
  readonly code: RoutingErrorCode;

  constructor(code: RoutingErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * Every candidate is cooling down. `retryAt` is the earliest time (epoch ms)
 * one of them returns; servers turn it into `Retry-After`.
 *
 * @example
 * ```ts
 * try { selector.select(); } catch (e) { if (e instanceof AllProvidersInCooldown) wait(e.retryAt - Date.now()); }
 * ```
 */
export class AllProvidersInCooldown extends RoutingError {
  override name = 'AllProvidersInCooldown';
  readonly retryAt: number;

  constructor(retryAt: number, message = `all providers are cooling down; the first returns at ${new Date(retryAt).toISOString()}`) {
    super('all_providers_in_cooldown', message);
    this.retryAt = retryAt;
  }
}

/** No candidate can take the request (none configured, none healthy, or no quota left). */
export class NoProviderAvailable extends RoutingError {
  override name = 'NoProviderAvailable';

  constructor(message = 'no provider is available') {
    super('no_provider_available', message);
  }
}

/** A provider name that is not configured. */
export class ProviderNotFound extends RoutingError {
  override name = 'ProviderNotFound';
  readonly provider: string;

  constructor(provider: string) {
    super('provider_not_found', `provider ${JSON.stringify(provider)} is not configured`);
    this.provider = provider;
  }
}

/** An error as a short message for events and status (never a stack, never unbounded). */
export function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 300 ? `${message.slice(0, 297)}...` : message;
}
