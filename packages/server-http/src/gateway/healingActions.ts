/**
 * @module healingActions
 * What the self-healer may do for an unhealthy provider: reset that
 * provider's pooled connections (only its own: every other provider's pool
 * keeps serving), and run a credential refresh pass now rather than at the
 * next tick (its tokens may have gone stale).
 */
import type { HealingAction } from '@switchyard/core-routing';
import type { Relay, UndiciTransport } from '@switchyard/relay';
import type { GatewayConfig } from './config/schema.js';
import { relayProviders } from './providers.js';

/** What the actions reach, read when an action runs (a reload may have changed them). */
export interface HealingParts {
  config(): GatewayConfig;
  relay(): Relay;
  transport: UndiciTransport;
  refreshCredentials(): Promise<unknown>;
}

/** The gateway's healing actions. */
export function healingActions(parts: HealingParts): HealingAction[] {
  return [
    {
      name: 'reset_connection_pool',
      run: async (provider) => {
        const origin = providerOrigin(parts, provider);
        if (origin !== undefined) await parts.transport.resetConnections(origin);
      },
    },
    {
      name: 'refresh_credentials',
      run: async () => {
        await parts.refreshCredentials();
      },
    },
  ];
}

/** Where the shared transport connects for `provider` (its base URL, else its health probe's); undefined for in-process kinds. */
function providerOrigin(parts: HealingParts, provider: string): string | undefined {
  const config = relayProviders(parts.config()).find((p) => p.name === provider);
  if (!config) return undefined;
  const adapter = parts.relay().adapter(config.kind);
  // An adapter with a transport of its own (the mock) holds no connection in the shared pool.
  if (!adapter || adapter.transport) return undefined;
  const url = config.baseUrl ?? adapter.healthRequest(config, undefined).url;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
