/**
 * @module cluster
 * `GET /v0/operations/cluster/status`: this node's view of the cluster
 * (node id, LISTEN connections, the last cross-node event it applied,
 * reconciliation figures). A node without `cluster.enabled` answers
 * `{enabled: false}`.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { ControlPlaneApp, GatewayParts } from '../parts.js';
import { jsonResponse, protectedErrors } from './schemas.js';

const ListenerSchema = z.object({ channel: z.string(), connected: z.boolean(), reconnects: z.number().int() });

const ClusterStatusSchema = z
  .union([
    z.object({ enabled: z.literal(false) }),
    z.object({
      enabled: z.literal(true),
      node_id: z.string(),
      listeners: z.object({ auth_events: ListenerSchema, cooldowns: ListenerSchema, quota: ListenerSchema, sign_ins: ListenerSchema }),
      last_event: z
        .object({
          event_id: z.string(),
          event_type: z.string(),
          auth_id: z.string().nullable(),
          revision: z.number().int().nullable(),
          origin_node_id: z.string(),
          applied_at: z.string(),
        })
        .nullable(),
      events: z.object({
        received: z.number().int(),
        applied: z.number().int(),
        invalid: z.number().int(),
        duplicates: z.number().int(),
        stale: z.number().int(),
        own: z.number().int(),
      }),
      reconcile: z.object({
        runs: z.number().int(),
        repaired: z.number().int(),
        last_at: z.string().nullable(),
        interval_ms: z.number().int(),
      }),
      cooldown_invalid_notifications: z.number().int(),
      quota_admissions: z.object({
        admitted: z.number().int(),
        refused: z.number().int(),
        failed: z.number().int(),
        stalled: z.number().int(),
        skipped: z.number().int(),
      }),
      config_reload_signals: z.number().int(),
    }),
  ])
  .openapi('ClusterStatus');

/** Registers `GET /v0/operations/cluster/status`. */
export function registerClusterRoutes(app: ControlPlaneApp, gateway: Pick<GatewayParts, 'cluster'>): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/operations/cluster/status',
      tags: ['operations'],
      summary: 'This node in the cluster: node id, LISTEN connections, last event applied, reconciliation',
      security: [{ managementKey: [] }],
      responses: { 200: jsonResponse(ClusterStatusSchema, 'The cluster as this node sees it'), ...protectedErrors },
    }),
    (c) => c.json(gateway.cluster ? gateway.cluster.status() : { enabled: false as const }, 200),
  );
}
