/**
 * @module health
 * `GET /health`: liveness, plus a readiness section saying whether the
 * gateway can serve a request right now. Public, like a load balancer needs.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { ControlPlaneApp, GatewayParts } from '../parts.js';
import { jsonResponse } from './schemas.js';

const HealthSchema = z
  .object({
    status: z.enum(['ok', 'degraded']),
    uptime_seconds: z.number(),
    ready: z.boolean(),
    readiness: z.object({
      providers_total: z.number(),
      providers_available: z.number(),
      providers_in_cooldown: z.array(z.string()),
      providers_unhealthy: z.array(z.string()),
    }),
    timestamp: z.string(),
  })
  .openapi('Health');

/** Registers `GET /health`. */
export function registerHealthRoutes(
  app: ControlPlaneApp,
  gateway: Pick<GatewayParts, 'config' | 'scheduler' | 'startedAt' | 'cooldowns' | 'health'>,
): void {
  const route = createRoute({
    method: 'get',
    path: '/health',
    summary: 'Liveness and readiness',
    responses: { 200: jsonResponse(HealthSchema, 'The process is alive; `ready` says whether any provider can serve') },
  });
  app.openapi(route, (c) => {
    const names = Object.entries(gateway.config().providers)
      .filter(([, p]) => p.enabled)
      .map(([name]) => name);
    const cooling = names.filter((n) => gateway.cooldowns.isCooling(n));
    const unhealthy = names.filter((n) => gateway.health.providers.includes(n) && !gateway.health.isHealthy(n));
    const available = names.filter((n) => !cooling.includes(n) && !unhealthy.includes(n)).length;
    const now = gateway.scheduler.now();
    return c.json(
      {
        status: available === names.length ? ('ok' as const) : ('degraded' as const),
        uptime_seconds: Math.round((now - gateway.startedAt) / 1000),
        ready: available > 0,
        readiness: {
          providers_total: names.length,
          providers_available: available,
          providers_in_cooldown: cooling,
          providers_unhealthy: unhealthy,
        },
        timestamp: new Date(now).toISOString(),
      },
      200,
    );
  });
}
