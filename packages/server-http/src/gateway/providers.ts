/**
 * @module providers
 * Turns the config's `providers.<name>` blocks into what the libraries take:
 * the relay's provider list, the cooldown durations, and the health probe
 * that calls each provider's health endpoint.
 */
import type { CooldownDurations, HealthProbe } from '@switchyard/core-routing';
import type {
  ProviderAdapter,
  ProviderConfig,
  QuotaExceededSettings,
  RelayCredential,
  Transport,
  UpstreamRequest,
} from '@switchyard/relay';
import type { GatewayConfig, ProviderBlock } from './config/schema.js';

/** The relay's view of the configured providers (disabled ones included, marked). */
export function relayProviders(config: GatewayConfig): ProviderConfig[] {
  return Object.entries(config.providers).map(([name, p]) => ({
    name,
    kind: p.kind,
    enabled: p.enabled,
    models: p.models,
    aliases: p.aliases,
    headers: p.headers,
    priority: p.priority,
    weight: p.weight,
    options: p.options,
    previewModels: p.preview_models,
    hostedTools: p.translation?.hosted_tools ?? config.translation.hosted_tools,
    ...(p.base_url ? { baseUrl: p.base_url } : {}),
    ...(p.cost_per_1k_tokens ? { costPer1k: p.cost_per_1k_tokens } : {}),
  }));
}

/** `quota-exceeded.*`, as the relay reads it. */
export function quotaExceededSettings(config: GatewayConfig): QuotaExceededSettings {
  const q = config['quota-exceeded'];
  return { switchCredential: q['switch-project'], switchPreviewModel: q['switch-preview-model'] };
}

/** Per-provider cooldown durations for `CooldownManager`. */
export function cooldownDurations(config: GatewayConfig): Record<string, CooldownDurations> {
  return Object.fromEntries(
    Object.entries(config.providers).map(([name, p]) => [
      name,
      {
        enabled: p.cooldown.enabled && config.server.operations.cooldown.enabled,
        defaultMs: p.cooldown.default_duration,
        ...(p.cooldown.rate_limit_duration !== undefined ? { rateLimitMs: p.cooldown.rate_limit_duration } : {}),
        ...(p.cooldown.error_duration !== undefined ? { errorMs: p.cooldown.error_duration } : {}),
      },
    ]),
  );
}

/**
 * Providers the health monitor tracks: every enabled one, so each has
 * request statistics; those with `health_check.enabled: false` are never
 * probed (the probe passes at once).
 */
export function monitoredProviders(config: GatewayConfig): string[] {
  return Object.entries(config.providers)
    .filter(([, p]) => p.enabled)
    .map(([name]) => name);
}

/** What the probe needs from the gateway. */
export interface ProbeDependencies {
  config: () => GatewayConfig;
  adapter: (kind: string) => ProviderAdapter | undefined;
  transport: Transport;
  /** A credential for the check, when the provider has any. */
  credential: (provider: string) => RelayCredential | undefined;
}

function healthRequest(name: string, block: ProviderBlock, deps: ProbeDependencies): UpstreamRequest {
  const adapter = deps.adapter(block.kind);
  if (!adapter) throw new Error(`unknown provider kind ${block.kind}`);
  const provider = relayProviders(deps.config()).find((p) => p.name === name)!;
  const request = adapter.healthRequest(provider, deps.credential(name));
  const method = block.health_check.method;
  // A HEAD probe sends no body (the adapter's probe may carry one for POST).
  const { body: _body, ...bodiless } = request;
  const probe: UpstreamRequest = method === 'HEAD' ? { ...bodiless, method } : { ...request, method };
  const endpoint = block.health_check.endpoint;
  if (!endpoint) return probe;
  // A configured endpoint: absolute, or relative to base_url.
  const url = /^https?:\/\//.test(endpoint) ? endpoint : `${(block.base_url ?? '').replace(/\/+$/, '')}/${endpoint.replace(/^\/+/, '')}`;
  return { ...probe, url };
}

/**
 * A health probe over each provider's health endpoint: healthy when it
 * answers below 500 (a 401 or 404 still proves the service is up; the
 * credential checks live elsewhere), unhealthy on 5xx, timeouts and refused
 * connections.
 */
export function createHealthProbe(deps: ProbeDependencies): HealthProbe {
  return async (name, signal) => {
    const block = deps.config().providers[name];
    if (!block) throw new Error(`provider ${name} is not configured`);
    if (!block.health_check.enabled) return;
    const adapter = deps.adapter(block.kind);
    const request = healthRequest(name, block, deps);
    const transport = adapter?.transport ?? deps.transport;
    const response = await transport.send(request, { signal });
    try {
      for await (const _chunk of response.body) {
        // Drain so the connection returns to the pool.
      }
    } finally {
      response.cancel();
    }
    if (response.status >= 500) throw new Error(`health endpoint answered ${response.status}`);
  };
}
