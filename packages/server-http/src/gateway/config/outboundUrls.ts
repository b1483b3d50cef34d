/**
 * @module outboundUrls
 * Every place in a gateway config that names a destination the gateway
 * calls on its own schedule (relay, health checks, sign-ins, failover,
 * notifications, traces, quota snapshots), with its config path. A config
 * that arrives through the management API is held to the SSRF guard for
 * each destination it adds or changes: a management key must not be enough
 * to aim the gateway at its own network and read the answer through `/v1/*`.
 */
import { parseSmtpServer } from '@switchyard/observability/config';
import { assertDestinationAllowed, type LookupFunction, SsrfBlocked } from '../../controlPlane/ssrf.js';
import type { GatewayConfig } from './schema.js';

/** One destination named in a config. */
export interface OutboundUrl {
  /** Dotted config path (`providers.acme.base_url`, `server.failover.peers.1`). */
  path: string;
  /** The setting as configured: what "unchanged" is judged on. */
  value: string;
  /** What the gateway connects to: the URL, or `smtp://host:port` for the mail server. */
  url: string;
  /** URL schemes the destination may have. */
  protocols: readonly string[];
}

const HTTP = ['http:', 'https:'] as const;
const SMTP = ['smtp:', 'smtps:'] as const;
/** Where an `oidc_url` template is checked when it names no builder-ID region (the preset's default). */
const DEFAULT_OIDC_REGION = 'us-east-1';

function http(path: string, value: string | undefined): OutboundUrl[] {
  return value === undefined || value === '' ? [] : [{ path, value, url: value, protocols: HTTP }];
}

/**
 * The outbound destinations of `config`, disabled providers and channels
 * included (enabling one later changes no URL). A relative
 * `health_check.endpoint` is left out: it stays on `base_url`'s host.
 *
 * @example
 * ```ts
 * outboundUrls(parseConfig(text)).map((u) => u.path); // ['providers.acme.base_url', 'server.failover.backup_url', …]
 * ```
 */
export function outboundUrls(config: GatewayConfig): OutboundUrl[] {
  const found: OutboundUrl[] = [];
  for (const [name, provider] of Object.entries(config.providers)) {
    const at = `providers.${name}`;
    found.push(...http(`${at}.base_url`, provider.base_url));
    const endpoint = provider.health_check.endpoint;
    if (endpoint && /^https?:\/\//i.test(endpoint)) found.push(...http(`${at}.health_check.endpoint`, endpoint));
    const quotaUrl = provider.options.quota_url;
    if (typeof quotaUrl === 'string') found.push(...http(`${at}.options.quota_url`, quotaUrl));
    const oauth = provider.oauth;
    if (oauth) {
      for (const key of ['device_authorization_url', 'token_url', 'api_token_url', 'user_url'] as const) {
        found.push(...http(`${at}.oauth.${key}`, oauth[key]));
      }
      // builder_id_start_url is not called: it is an identifier the OIDC service is told.
      if (oauth.oidc_url) {
        const region = oauth.builder_id_region ?? DEFAULT_OIDC_REGION;
        found.push({
          path: `${at}.oauth.oidc_url`,
          value: oauth.oidc_url,
          url: oauth.oidc_url.replaceAll('{region}', region),
          protocols: HTTP,
        });
      }
    }
  }
  const failover = config.server.failover;
  // self_url is this node's own place on the ring; requests it owns are never forwarded to it.
  found.push(...http('server.failover.backup_url', failover.backup_url));
  found.push(...failover.peers.flatMap((peer, index) => http(`server.failover.peers.${index}`, peer)));
  const { chat, pager, email } = config.notifications;
  found.push(...http('notifications.chat.webhook_url', chat.webhook_url));
  found.push(...http('notifications.pager.url', pager.url));
  if (email.smtp_server) {
    // The schema has parsed it already; only the host and port are a destination (credentials stay out of the URL).
    const { host, port } = parseSmtpServer(email.smtp_server);
    const url = `smtp://${host.includes(':') ? `[${host}]` : host}:${port}`;
    found.push({ path: 'notifications.email.smtp_server', value: email.smtp_server, url, protocols: SMTP });
  }
  found.push(...http('tracing.endpoint', config.tracing.endpoint));
  return found;
}

/** The path a setting is compared under: list entries by their list, so reordering peers changes nothing. */
function comparedAt(path: string): string {
  return path.replace(/\.\d+$/, '');
}

/**
 * The destinations of `next` that `running` does not already have at the
 * same path (for lists: anywhere in the same list). Those are the ones a
 * config change introduces, and the only ones it is answerable for.
 */
export function changedOutboundUrls(next: GatewayConfig, running: GatewayConfig): OutboundUrl[] {
  const known = new Map<string, Set<string>>();
  for (const { path, value } of outboundUrls(running)) {
    const key = comparedAt(path);
    if (!known.has(key)) known.set(key, new Set());
    known.get(key)!.add(value);
  }
  return outboundUrls(next).filter(({ path, value }) => !known.get(comparedAt(path))?.has(value));
}

/** A destination a config change may not introduce, and why. */
export interface OutboundRefusal {
  /** The config path (`providers.acme.base_url`). */
  field: string;
  message: string;
  /** The refused address range, when the host is in one. */
  range?: string;
}

const ALLOW_LIST = 'remote-management.api-call-allow';

/**
 * What is wrong with a config change from the destinations' point of view:
 * each destination it adds or changes must pass the SSRF guard (the policy
 * is the running config's `api-call-allow`), and the allow-list itself may
 * not grow, or a change could first allow a private host and then aim at it.
 * Unchanged destinations pass: they were vouched for by whoever wrote them.
 * Empty when the change is acceptable.
 *
 * @example
 * ```ts
 * const refusals = await refusedOutboundUrls(parseConfig(body), gateway.config());
 * ```
 */
export async function refusedOutboundUrls(
  next: GatewayConfig,
  running: GatewayConfig,
  resolve?: LookupFunction,
): Promise<OutboundRefusal[]> {
  const allow = running['remote-management']['api-call-allow'];
  const refusals: OutboundRefusal[] = [];
  const added = next['remote-management']['api-call-allow'].filter((host) => !allow.includes(host));
  if (added.length > 0) {
    refusals.push({
      field: ALLOW_LIST,
      message: `${added.join(', ')} may be added to ${ALLOW_LIST} only in the config file, not through the management API`,
    });
  }
  const checks = changedOutboundUrls(next, running).map(async ({ path, url, protocols }): Promise<OutboundRefusal | undefined> => {
    try {
      await assertDestinationAllowed(url, { allow }, { protocols, ...(resolve ? { resolve } : {}) });
      return undefined;
    } catch (error) {
      if (error instanceof SsrfBlocked) {
        return {
          field: path,
          message: `${error.host} is a ${error.range} address (${error.address}); name it in ${ALLOW_LIST} in the config file to allow it`,
          range: error.range,
        };
      }
      if (error instanceof TypeError) return { field: path, message: error.message };
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      return { field: path, message: `its host cannot be resolved (${code}), so it cannot be checked` };
    }
  });
  for (const refusal of await Promise.all(checks)) if (refusal) refusals.push(refusal);
  return refusals;
}
