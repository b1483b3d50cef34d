/**
 * @module operations
 * `/v0/operations`: what the routing layer is doing, and the two levers an
 * operator pulls by hand (cool a provider down, bring it back).
 */
import { createRoute, z } from '@hono/zod-openapi';
import { MAX_COOLDOWN_MS } from '@switchyard/core-routing';
import { ApiError, fieldDetail } from '@switchyard/http-kit';
import { parseDuration } from '@switchyard/observability/config';
import type { ControlPlaneApp, GatewayParts } from '../parts.js';
import { ErrorSchema, jsonResponse, ProviderParam, protectedErrors } from './schemas.js';

const ProviderStatusSchema = z
  .object({
    status: z.string(),
    in_cooldown: z.boolean(),
    last_check: z.string().nullable(),
    uptime_percent: z.number().nullable(),
    requests_last_minute: z.number(),
    errors_last_minute: z.number(),
    average_latency_ms: z.number().nullable(),
    last_healing_action: z
      .object({ action: z.string(), ok: z.boolean(), error: z.string().nullable(), attempt: z.number(), at: z.string() })
      .nullable()
      .openapi({ description: 'The last self-healing action run on the provider (kept after it recovers); null when none ran' }),
  })
  .passthrough()
  .openapi('ProviderStatus');

const CooldownBodySchema = z
  .object({
    duration: z
      .union([z.string(), z.number().nonnegative()])
      .openapi({ example: '5m', description: 'A duration such as 30s or 5m, or milliseconds' }),
    reason: z.string().max(200).optional().openapi({ description: 'Free text, logged with the cooldown' }),
  })
  .openapi('CooldownRequest');

const PeriodSchema = z
  .object({ provider: z.string(), reason: z.string(), started_at: z.string(), ends_at: z.string(), note: z.string().nullable() })
  .openapi('CooldownPeriod');

function assertProvider(
  gateway: Pick<GatewayParts, 'config' | 'scheduler' | 'observability' | 'relay' | 'cooldowns' | 'health' | 'healer' | 'providerStats'>,
  name: string,
): void {
  if (!gateway.config().providers[name]) throw new ApiError('provider_not_found', `provider ${JSON.stringify(name)} is not configured`);
}

/** Registers the operations routes. */
export function registerOperationsRoutes(
  app: ControlPlaneApp,
  gateway: Pick<GatewayParts, 'config' | 'scheduler' | 'observability' | 'relay' | 'cooldowns' | 'health' | 'healer' | 'providerStats'>,
): void {
  const tag = ['operations'];
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/operations/providers/status',
      tags: tag,
      summary: 'Health, cooldown and traffic of every provider',
      security: [{ managementKey: [] }],
      responses: {
        200: jsonResponse(
          z.object({ providers: z.record(z.string(), ProviderStatusSchema), timestamp: z.string() }),
          'One record per provider',
        ),
        ...protectedErrors,
      },
    }),
    (c) => {
      const providers: Record<string, z.infer<typeof ProviderStatusSchema>> = {};
      for (const [name, block] of Object.entries(gateway.config().providers)) {
        const last_healing_action = gateway.healer.lastAction(name) ?? null;
        if (gateway.health.providers.includes(name)) {
          providers[name] = { ...gateway.health.providerStatus(name), last_healing_action };
          continue;
        }
        providers[name] = {
          status: block.enabled ? 'unknown' : 'disabled',
          in_cooldown: gateway.cooldowns.isCooling(name),
          last_check: null,
          uptime_percent: null,
          requests_last_minute: 0,
          errors_last_minute: 0,
          average_latency_ms: null,
          last_healing_action,
        };
      }
      return c.json({ providers, timestamp: new Date(gateway.scheduler.now()).toISOString() }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/operations/providers/stats',
      tags: tag,
      summary: 'Live traffic per provider: totals and per-second series of the last 5 minutes (as GET /v1/metrics/providers)',
      security: [{ managementKey: [] }],
      responses: {
        200: jsonResponse(
          z.object({ window_seconds: z.number(), until: z.number(), providers: z.record(z.string(), z.unknown()) }).passthrough(),
          'Statistics',
        ),
        ...protectedErrors,
      },
    }),
    (c) => c.json(gateway.providerStats() as never, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/operations/cooldown/status',
      tags: tag,
      summary: 'Providers in cooldown and their periods',
      security: [{ managementKey: [] }],
      responses: {
        200: jsonResponse(
          z.object({ providers_in_cooldown: z.array(z.string()), cooldown_periods: z.record(z.string(), z.unknown()) }).passthrough(),
          'Cooldown state',
        ),
        ...protectedErrors,
      },
    }),
    (c) => c.json(gateway.cooldowns.status() as never, 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v0/operations/providers/{p}/cooldown',
      tags: tag,
      summary: 'Cool a provider down by hand',
      security: [{ managementKey: [] }],
      request: { params: ProviderParam, body: { required: true, content: { 'application/json': { schema: CooldownBodySchema } } } },
      responses: {
        200: jsonResponse(PeriodSchema, 'The cooldown now in force'),
        422: jsonResponse(ErrorSchema, 'A bad duration'),
        ...protectedErrors,
      },
    }),
    (c) => {
      const { p } = c.req.valid('param');
      const body = c.req.valid('json');
      assertProvider(gateway, p);
      let durationMs: number;
      try {
        durationMs = parseDuration(body.duration);
      } catch (error) {
        throw new ApiError('validation_failed', `duration: ${(error as Error).message}`, {
          details: fieldDetail('duration', (error as Error).message),
        });
      }
      const problem = !(durationMs > 0) ? 'must be longer than 0' : durationMs > MAX_COOLDOWN_MS ? 'must be at most 24 days' : undefined;
      if (problem) throw new ApiError('validation_failed', `duration: ${problem}`, { details: fieldDetail('duration', problem) });
      // The reason given is kept with the period, and shown as its reason in /cooldown/status.
      const period = gateway.cooldowns.cooldown(p, durationMs, 'manual', body.reason || undefined);
      gateway.observability.logger.info({ provider: p, duration_ms: durationMs, note: body.reason ?? null }, 'manual_cooldown');
      return c.json(
        {
          provider: p,
          reason: period.note ?? period.reason,
          started_at: new Date(period.startedAt).toISOString(),
          ends_at: new Date(period.endsAt).toISOString(),
          note: body.reason ?? null,
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v0/operations/providers/{p}/recover',
      tags: tag,
      summary: 'End a provider’s cooldown now',
      security: [{ managementKey: [] }],
      request: { params: ProviderParam },
      responses: {
        200: jsonResponse(z.object({ provider: z.string(), recovered: z.boolean() }), '`recovered` is false when it was not cooling'),
        ...protectedErrors,
      },
    }),
    (c) => {
      const { p } = c.req.valid('param');
      assertProvider(gateway, p);
      return c.json({ provider: p, recovered: gateway.cooldowns.recover(p) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/operations/load_balancing/status',
      tags: tag,
      summary: 'Strategy, counter, candidates with their statistics, and the last decision',
      security: [{ managementKey: [] }],
      responses: {
        200: jsonResponse(z.object({ strategy: z.string(), counter: z.number() }).passthrough(), 'Load-balancing state'),
        ...protectedErrors,
      },
    }),
    (c) => c.json(gateway.relay.table.status() as never, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/operations/alerts',
      tags: tag,
      summary: 'Alert rules, their states, and recent notifications',
      security: [{ managementKey: [] }],
      responses: { 200: jsonResponse(z.object({ enabled: z.boolean() }).passthrough(), 'Alert state'), ...protectedErrors },
    }),
    (c) => c.json(gateway.observability.alertsReport() as never, 200),
  );
}
