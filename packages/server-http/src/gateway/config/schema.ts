/**
 * @module schema
 * The gateway's YAML config, as one zod schema: every documented key, its
 * default, and what it accepts. Durations are written `100ms`, `30s`, `5m`
 * and parse to milliseconds. Unknown keys are errors (a typo must not be
 * silently ignored), and every bad path is reported at once.
 * `docs/configuration.md` documents the same keys.
 */

import { STRATEGIES } from '@switchyard/core-routing';
import { AuthConfigSchema } from '@switchyard/credentials';
import { observabilityConfigSchema } from '@switchyard/observability';
import { durationSchema, sizeSchema } from '@switchyard/observability/config';
import { isAnthropicThinkingMode } from '@switchyard/translate';
import { z } from 'zod';

const port = z.number().int().min(0).max(65_535);
const nonNegativeInt = z.number().int().min(0);
const httpUrl = z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' });

/** A provider's cooldown durations (`providers.<p>.cooldown`). */
const providerCooldownSchema = z.strictObject({
  enabled: z.boolean().default(true),
  default_duration: durationSchema.default(5 * 60_000),
  rate_limit_duration: durationSchema.optional(),
  error_duration: durationSchema.optional(),
});

/** How a provider's health is checked (`providers.<p>.health_check`). */
const providerHealthSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** Path (relative to `base_url`) or absolute URL; default: the kind's models endpoint. */
  endpoint: z.string().min(1).optional(),
  method: z.enum(['GET', 'HEAD', 'POST']).default('GET'),
});

/** Names a flow may have: the `{flow}` of `/v0/oauth/{flow}` and `switchyard login <flow>`. */
export const FLOW_NAME = /^[a-z0-9][a-z0-9._-]*$/;

/** The sign-in kinds a provider may declare (`providers.<p>.oauth.preset`). */
export const OAUTH_PRESETS = ['device-code', 'code-assistant', 'cloud-coding-assistant'] as const;

/**
 * How a provider's credentials are signed in (`providers.<p>.oauth`): a
 * standard RFC 8628 device flow (`device-code`, the default) at the given
 * endpoints, or one of the two presets with its endpoints overridden. The
 * endpoints come from the operator, never from a sign-in's caller.
 */
const providerOAuthSchema = z
  .strictObject({
    /** Flow name (default: the preset's name, or the provider's name, lower-cased, for `device-code`). */
    flow: z.string().regex(FLOW_NAME, 'a flow name is lower-case letters, digits, ".", "_" or "-"').optional(),
    preset: z.enum(OAUTH_PRESETS).default('device-code'),
    /** RFC 8628 §3.1 endpoint (`device-code`, `code-assistant`). */
    device_authorization_url: httpUrl.optional(),
    /** RFC 8628 §3.4 / RFC 6749 token endpoint (`device-code`, `code-assistant`). */
    token_url: httpUrl.optional(),
    client_id: z.string().min(1).optional(),
    /** For confidential clients (`device-code`); redacted in `/v0/management/config`. */
    client_secret: z.string().min(1).optional(),
    scope: z.string().min(1).optional(),
    /** `code-assistant`: the exchange of the account token for an API token. */
    api_token_url: httpUrl.optional(),
    /** `code-assistant`: where the account's login (the credential's label) is read. */
    user_url: httpUrl.optional(),
    /** `cloud-coding-assistant`: the OIDC endpoint, `{region}` standing for the region (default `https://oidc.{region}.amazonaws.com`). */
    oidc_url: z
      .string()
      .refine(
        (url) => URL.canParse(url.replaceAll('{region}', 'us-east-1')) && /^https?:\/\//.test(url),
        'expected an http:// or https:// URL',
      )
      .optional(),
    /** `cloud-coding-assistant`: the builder-ID start URL and region. */
    builder_id_start_url: httpUrl.optional(),
    builder_id_region: z.string().min(1).optional(),
  })
  .superRefine((oauth, ctx) => {
    if (oauth.preset !== 'device-code') return;
    for (const key of ['device_authorization_url', 'token_url', 'client_id'] as const) {
      if (!oauth[key]) ctx.issues.push({ code: 'custom', message: `${key} is required for a device-code flow`, path: [key], input: oauth });
    }
  });

/**
 * What a translated request does with a client's hosted tools (Responses'
 * `web_search`, Anthropic's server tools, Gemini's `googleSearch`, …), which
 * no other family's upstream runs: `drop` leaves them out and names them in
 * `x-switchyard-dropped-fields`; `refuse` answers 400 `unsupported_translation`.
 */
export const hostedToolsSchema = z.enum(['drop', 'refuse']);

/** `translation` (top level): the defaults every provider's `translation` block may override. */
const translationSchema = z.strictObject({
  hosted_tools: hostedToolsSchema.default('drop'),
});

/** `providers.<name>`. */
export const providerSchema = z
  .strictObject({
    kind: z.string().min(1, 'kind is required (openai, openai-compatible, anthropic, gemini, mock, …)'),
    enabled: z.boolean().default(true),
    base_url: httpUrl.optional(),
    /** Models served: exact names or globs (`gpt-4o*`). */
    models: z.array(z.string().min(1)).default([]),
    /** Client-facing model name → name sent upstream. */
    aliases: z.record(z.string().min(1), z.string().min(1)).default({}),
    /** Extra headers sent upstream. */
    headers: z.record(z.string().min(1), z.string()).default({}),
    /** Lower is preferred by the `priority` strategy. */
    priority: z.number().int().default(0),
    /** Share of traffic under the `weighted` strategy. */
    weight: z.number().positive().default(1),
    quota: z
      .strictObject({
        limit: nonNegativeInt,
        reset: z.enum(['daily', 'monthly']).default('monthly'),
      })
      .optional(),
    cost_per_1k_tokens: z.strictObject({ input: z.number().min(0), output: z.number().min(0) }).optional(),
    cooldown: providerCooldownSchema.prefault({}),
    health_check: providerHealthSchema.prefault({}),
    /** Fallback models tried once when every credential for a model is exhausted (`quota-exceeded.switch-preview-model`). */
    preview_models: z.array(z.string().min(1)).default([]),
    /** Kind-specific settings (the mock provider's `latency_ms`, `fail_every`, …; `quota_url` for `/provider-a-quota`). */
    options: z.record(z.string(), z.unknown()).default({}),
    /** The device sign-in that creates this provider's credentials (`/v0/oauth/{flow}`, `switchyard login`). */
    oauth: providerOAuthSchema.optional(),
    /** Translation settings for this provider; each absent key takes the top-level `translation` one. */
    translation: z.strictObject({ hosted_tools: hostedToolsSchema.optional() }).optional(),
  })
  .superRefine((provider, ctx) => {
    if (provider.kind === 'openai-compatible' && !provider.base_url) {
      ctx.issues.push({ code: 'custom', message: 'openai-compatible needs base_url', path: ['base_url'], input: provider });
    }
    const quotaUrl = provider.options.quota_url;
    if (quotaUrl !== undefined && !httpUrl.safeParse(quotaUrl).success) {
      ctx.issues.push({
        code: 'custom',
        message: 'quota_url must be an http:// or https:// URL',
        path: ['options', 'quota_url'],
        input: quotaUrl,
      });
    }
    checkThinkingModes(provider.options.thinking_modes, ctx);
  });

/**
 * `options.thinking_modes` (model glob → `adaptive` or `budget`): an entry with another value
 * would be ignored and the model asked to think the other way, so a typo is refused, naming it.
 */
function checkThinkingModes(modes: unknown, ctx: z.RefinementCtx): void {
  if (modes === undefined) return;
  if (modes === null || typeof modes !== 'object' || Array.isArray(modes)) {
    const message = 'thinking_modes must map model globs to "adaptive" or "budget"';
    ctx.issues.push({ code: 'custom', message, path: ['options', 'thinking_modes'], input: modes });
    return;
  }
  for (const [glob, mode] of Object.entries(modes)) {
    if (isAnthropicThinkingMode(mode)) continue;
    const message = `must be "adaptive" or "budget", not ${JSON.stringify(mode)}`;
    ctx.issues.push({ code: 'custom', message, path: ['options', 'thinking_modes', glob], input: mode });
  }
}

/** `remote-management.*`. */
const remoteManagementSchema = z.strictObject({
  /** Key of `/v0/management` and `/v0/operations`; empty hides them (404). */
  'secret-key': z.string().default(''),
  /** Whether clients other than this machine may use them. */
  'allow-remote': z.boolean().default(false),
  /** Reverse proxies whose `X-Forwarded-For` is believed. */
  'trusted-proxies': z.array(z.string().min(1)).default([]),
  /** Wrong keys from one address before it is locked out. */
  'max-failures': z.number().int().min(1).default(5),
  'lockout-duration': durationSchema.default(30 * 60_000),
  /** Hosts `/api-call` may reach although they resolve to private addresses. */
  'api-call-allow': z.array(z.string().min(1)).default([]),
});

/** `server.operations.*`. */
const operationsSchema = z.strictObject({
  load_balancing: z
    .strictObject({
      strategy: z.enum(STRATEGIES).default('round_robin'),
      latency_window: durationSchema.default(5 * 60_000),
    })
    .prefault({}),
  cooldown: z
    .strictObject({
      enabled: z.boolean().default(true),
      detection_window: durationSchema.default(60_000),
      error_threshold: z.number().int().min(1).default(5),
    })
    .prefault({}),
  health_check: z
    .strictObject({
      enabled: z.boolean().default(true),
      interval: durationSchema.default(30_000),
      timeout: durationSchema.default(10_000),
      unhealthy_threshold: z.number().int().min(1).default(3),
      healthy_threshold: z.number().int().min(1).default(2),
    })
    .prefault({}),
  self_healing: z
    .strictObject({
      enabled: z.boolean().default(true),
      check_interval: durationSchema.default(60_000),
      max_attempts: z.number().int().min(1).default(3),
      backoff_duration: durationSchema.default(30_000),
    })
    .prefault({}),
  connection_pool: z
    .strictObject({
      max_idle_conns: z.number().int().min(1).default(100),
      max_idle_conns_per_host: z.number().int().min(1).default(10),
      // 0: no cap. Open connections are not what max_idle_conns_per_host bounds.
      max_conns_per_host: z.number().int().min(0).default(0),
      idle_conn_timeout: durationSchema.default(90_000),
      request_timeout: durationSchema.default(60_000),
    })
    .prefault({}),
  batch_processing: z
    .strictObject({
      enabled: z.boolean().default(true),
      max_batch_size: z.number().int().min(1).default(10),
      timeout: durationSchema.default(100),
    })
    .prefault({}),
  cache: z
    .strictObject({
      // Off unless asked for: a completion is a sample, and a cached one is the same sample again.
      enabled: z.boolean().default(false),
      streaming: z.boolean().default(false),
      sampled: z.boolean().default(false),
      size: z.number().int().min(1).default(1000),
      ttl: durationSchema.default(5 * 60_000),
    })
    .prefault({}),
  retry: z
    .strictObject({
      /** Attempts per request, the first included. */
      max_attempts: z.number().int().min(1).max(10).default(3),
    })
    .prefault({}),
});

/** `server.failover.*`. */
const failoverSchema = z
  .strictObject({
    /**
     * The specification's switch. `false`: no failover, whatever `mode` says.
     * `true`: `mode` must be `active_passive` or `active_active`. Left out:
     * `mode` decides (`none`, the default, is off).
     */
    enabled: z.boolean().optional(),
    mode: z.enum(['none', 'active_passive', 'active_active']).default('none'),
    /** active_passive: where traffic goes when this node's providers are all down. */
    backup_url: httpUrl.optional(),
    failover_timeout: durationSchema.default(30_000),
    health_check_interval: durationSchema.default(10_000),
    /** active_active: the other nodes' base URLs. */
    peers: z.array(httpUrl).default([]),
    load_balancing: z.literal('consistent_hash').default('consistent_hash'),
    /** This node's own base URL, as peers reach it (its place on the ring). */
    self_url: httpUrl.optional(),
  })
  .superRefine((value, ctx) => {
    if (value.enabled === true && value.mode === 'none') {
      ctx.issues.push({
        code: 'custom',
        message: 'enabled: true needs mode active_passive or active_active',
        path: ['mode'],
        input: value,
      });
    }
    // A disabled failover block may be half filled in: it is not used.
    if (value.enabled === false) return;
    if (value.mode === 'active_passive' && !value.backup_url) {
      ctx.issues.push({ code: 'custom', message: 'backup_url is required for active_passive', path: ['backup_url'], input: value });
    }
  });

/** `server.websocket.*`: the websocket routes `/v1/ws` and `/v1/responses`. */
const websocketSchema = z.strictObject({
  /** Largest message a client may send; a larger one closes the socket with 1009. */
  max_message_size: sizeSchema
    .pipe(
      z
        .number()
        .int()
        .min(1024)
        .max(64 * 1024 ** 2),
    )
    .default(1024 ** 2),
  /** How often the gateway pings; a client that has not answered the previous ping by then is dropped. */
  ping_interval: durationSchema.pipe(z.number().int().min(1000)).default(30_000),
  /** `response.create` requests one socket may have in flight. */
  max_in_flight: z.number().int().min(1).max(1000).default(8),
  /** Bytes queued to a slow client past which the gateway stops reading upstream until they drain. */
  high_water_mark: sizeSchema.pipe(z.number().int().min(1024)).default(1024 ** 2),
});

/**
 * `server.http.*`: the client connections of the one HTTP server both planes share. Each client
 * connection holds a socket and its buffers, so slow or idle clients must not pile up unbounded.
 */
const httpSchema = z.strictObject({
  /** Client connections open at once (idle keep-alive ones and websockets included); one more is closed as it arrives. */
  max_connections: z.number().int().min(1).max(1_000_000).default(4096),
  /** Time a client has to send a whole request, headers and body; past it the gateway answers 408 and closes. */
  request_timeout: durationSchema
    .pipe(
      z
        .number()
        .int()
        .min(100)
        .max(60 * 60_000),
    )
    .default(60_000),
});

/** `cluster.*` (several nodes on one PostgreSQL; off by default). */
const clusterSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    database_url: z.string().default(''),
    /** This node's name in cross-node events; empty: the host name. */
    node_id: z.string().default(''),
    /** `subject.tenant_id` of the cross-node auth events this node publishes. */
    tenant_id: z.string().min(1).max(64).default('default'),
    /** NOTIFY channel of credential events. Channels are database-wide: deployments (and test files) sharing a database each need their own. */
    auth_events_channel: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lower-case SQL identifier')
      .default('svc_auth_events_v1'),
    /** NOTIFY channel of cooldown changes (database-wide, like `auth_events_channel`). */
    cooldown_channel: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lower-case SQL identifier')
      .default('svc_cooldown_events_v1'),
    /** NOTIFY channel of committed quota totals (database-wide, like `auth_events_channel`). */
    quota_channel: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lower-case SQL identifier')
      .default('svc_quota_totals_v1'),
    /** NOTIFY channel of sign-in cancel requests from one node to the node running the sign-in (database-wide, like `auth_events_channel`). */
    signin_channel: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lower-case SQL identifier')
      .default('svc_signin_events_v1'),
    /** NOTIFY channel of changed client keys (database-wide, like `auth_events_channel`): every node's guard follows it. */
    client_keys_channel: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lower-case SQL identifier')
      .default('svc_client_keys_v1'),
    /** Part of the refresh lock's advisory-lock key, so unrelated users of one database never wait on each other. */
    refresh_lock_namespace: z.string().min(1).default('switchyard-refresh'),
    /** How often every stored credential revision and cooldown is compared with this node's view (repairs missed events); 0: only after a reconnection. */
    reconcile_interval: durationSchema.default(30_000),
    /**
     * How often quota usage is added to PostgreSQL. Each node learns the
     * others' use from the answer to its own write, so 0 (after every
     * request, off the request path) keeps the overshoot past a limit to the
     * requests in flight; longer intervals let it grow by that much traffic.
     */
    quota_flush_interval: durationSchema.default(0),
    /**
     * How long a request's quota reservation lives unsettled. Every request on
     * a credential with a limit holds an estimate of its tokens in PostgreSQL
     * from admission until its usage is written; a node that dies mid-request
     * leaves its reservations behind, and they lapse after this long.
     */
    quota_reservation_ttl: durationSchema.default(10 * 60_000),
    /**
     * How long a request waits for its quota admission while PostgreSQL
     * answers nothing at all (one answering other admissions, a burst on one
     * row, is waited for). Past it, or on a database error, the request goes
     * ahead without a reservation, and for the next 5 s requests do not ask:
     * a stalled database never stalls the request path.
     */
    quota_admission_timeout: durationSchema.default(5000),
    /** Connections of this node's pool for the shared stores. */
    pool_size: z.number().int().min(2).max(100).default(8),
  })
  .refine((c) => !c.enabled || c.database_url.length > 0, {
    message: 'cluster.database_url is required when the cluster is enabled',
    path: ['database_url'],
  });

/** `usage.*`: per-minute usage rollups by client key, tenant, provider and model. */
const usageSchema = z.strictObject({
  /** Account every request (SQLite in `auth-dir`, PostgreSQL in a cluster). */
  enabled: z.boolean().default(true),
  /** How long counts wait in memory before a batched write: at most what a crash loses. */
  flush_interval: durationSchema.pipe(z.number().min(100, 'at least 100ms').max(3_600_000, 'at most 1h')).default(10_000),
  /** Rollups older than this are deleted (checked at start and every hour). */
  retention: durationSchema.pipe(z.number().min(3_600_000, 'at least 1h')).default(90 * 86_400_000),
  metrics: z
    .strictObject({
      /** Client keys labelled in `svc_client_key_*` before the rest count under `other` (0: all under `other`). */
      max_key_labels: z.number().int().min(0).max(10_000).default(100),
    })
    .prefault({}),
});

/** The whole gateway config. */
export const gatewayConfigSchema = z
  .strictObject({
    host: z.string().min(1).default('127.0.0.1'),
    port: port.default(8317),
    'auth-dir': z.string().min(1).default('./auths'),
    /**
     * Keys clients send to `/v1/*`: a key, or `{key, name, admin, tenant}` (the name identifies the client in the API
     * and the dashboard, the tenant groups keys for usage; the key is never shown). Empty leaves `/v1/*` open (loopback only, unless --insecure).
     */
    'api-keys': z
      .array(
        z.union(
          [
            z.string().min(1),
            z
              .object({
                key: z.string().min(1),
                name: z.string().min(1).max(128),
                admin: z.boolean().default(false),
                tenant: z.string().min(1).max(64).optional(),
              })
              .strict(),
          ],
          { error: 'an api-keys entry is a key, or {key, name, admin, tenant} with a name of 1 to 128 characters' },
        ),
      )
      .default([]),
    /**
     * More `Host` names (`name` or `name:port`) served where access rests on loopback or a session cookie: a key-less
     * `/v1/*`, the dashboard. Loopback names, the bind address and the host of `server.failover.self_url` always are.
     */
    'allowed-hosts': z.array(z.string().min(1)).default([]),
    /** Origins (`https://app.example.com`) allowed to open websockets and to make cookie- or loopback-authorized changes. */
    'allowed-origins': z.array(z.string().min(1)).default([]),
    'remote-management': remoteManagementSchema.prefault({}),
    'quota-exceeded': z
      .strictObject({
        'switch-project': z.boolean().default(true),
        'switch-preview-model': z.boolean().default(true),
      })
      .prefault({}),
    /** `auth.*`, as the credentials package defines it. */
    auth: AuthConfigSchema,
    providers: z
      .record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'a provider name is letters, digits, _ . -'), providerSchema)
      .default({}),
    server: z
      .strictObject({
        operations: operationsSchema.prefault({}),
        failover: failoverSchema.prefault({}),
        websocket: websocketSchema.prefault({}),
        http: httpSchema.prefault({}),
      })
      .prefault({}),
    cluster: clusterSchema.prefault({}),
    usage: usageSchema.prefault({}),
    /** How translated requests treat what the upstream family cannot do (`providers.<p>.translation` overrides it). */
    translation: translationSchema.prefault({}),
    ...observabilityConfigSchema.shape,
  })
  .superRefine((config, ctx) => {
    // Two providers may not claim one flow name: `/v0/oauth/{flow}` must mean one thing.
    const owner = new Map<string, string>();
    for (const [name, provider] of Object.entries(config.providers)) {
      if (!provider.oauth) continue;
      const flow = oauthFlowName(name, provider.oauth);
      const first = owner.get(flow);
      if (first === undefined) owner.set(flow, name);
      else
        ctx.issues.push({
          code: 'custom',
          message: `flow ${flow} is already declared by provider ${first}`,
          path: ['providers', name, 'oauth', 'flow'],
          input: provider.oauth,
        });
    }
    // Secrets shared through PostgreSQL are sealed with this key on every node; a cluster without it is refused.
    if (config.cluster.enabled && !config.auth.encryption.enabled) {
      ctx.issues.push({
        code: 'custom',
        message:
          'the cluster keeps secrets in PostgreSQL encrypted: set auth.encryption.enabled and auth.encryption.key (the same key on every node)',
        path: ['auth', 'encryption', 'enabled'],
        input: config.auth,
      });
    }
  });

/** The flow name a provider's `oauth` block declares. */
export function oauthFlowName(provider: string, oauth: Pick<ProviderOAuth, 'flow' | 'preset'>): string {
  return oauth.flow ?? (oauth.preset === 'device-code' ? provider.toLowerCase() : oauth.preset);
}

/** The parsed config, durations in milliseconds. */
/**
 * The config's JSON Schema (draft 2020-12), generated from {@link gatewayConfigSchema}
 * as a config file is written (durations and sizes as strings or numbers), for
 * editors: a `# yaml-language-server: $schema=...` line in a config file makes
 * them complete and check its keys. Rules zod checks in code (a mode's required
 * URL, say) are not in it; `switchyard config check` has them all.
 *
 * @example
 * ```ts
 * writeFileSync('config.schema.json', JSON.stringify(gatewayConfigJsonSchema(), null, 2));
 * ```
 */
export function gatewayConfigJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(gatewayConfigSchema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' });
  return { ...schema, title: 'Switchyard gateway config' };
}

export type GatewayConfig = z.output<typeof gatewayConfigSchema>;
/** The config as written. */
export type GatewayConfigInput = z.input<typeof gatewayConfigSchema>;
/** One parsed provider block. */
export type ProviderBlock = z.output<typeof providerSchema>;
/** One parsed `providers.<p>.oauth` block. */
export type ProviderOAuth = z.output<typeof providerOAuthSchema>;
