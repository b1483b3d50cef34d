/**
 * @module clientKeys (routes)
 * `/v0/management/client-keys`: runtime client keys, thin over the
 * `ClientKeyGuard` and its store. The secret is in the answer to the create
 * and nowhere else: list, get, update and revoke show the key's id, name,
 * tenant, limits, a four-character hint, and its budget's use.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { ApiError } from '@switchyard/http-kit';
import {
  applyUpdate,
  type ClientKeyRecord,
  ClientKeyViewSchema,
  CreateClientKeySchema,
  createRecord,
  UpdateClientKeySchema,
} from '../../clientKeys/clientKeyRecord.js';
import type { ControlPlaneApp, GatewayParts } from '../parts.js';
import { ErrorSchema, jsonResponse, protectedErrors } from './schemas.js';

const tags = ['client-keys'];
const security = [{ managementKey: [] }];
const base = '/v0/management/client-keys';

const IdPath = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'ck_0123456789abcdef' }),
});
const ListQuery = z.object({
  tenant: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .openapi({ param: { name: 'tenant', in: 'query' } }),
  revoked: z
    .enum(['true', 'false'])
    .optional()
    .openapi({ param: { name: 'revoked', in: 'query' }, description: 'true: only revoked keys; false: only live ones' }),
});
const CreatedSchema = z
  .object({
    key: ClientKeyViewSchema,
    secret: z.string().openapi({ description: 'The key itself (`sk-sy-…`): shown this once, stored only as a hash', example: 'sk-sy-…' }),
  })
  .openapi('ClientKeyCreated');
const errors422 = { 422: jsonResponse(ErrorSchema, 'A field failed validation (`details.field`)') };
const notFound = { 404: jsonResponse(ErrorSchema, 'No client key has this id') };

/** Registers the client-key routes. */
export function registerClientKeyRoutes(app: ControlPlaneApp, gateway: Pick<GatewayParts, 'clientKeys' | 'scheduler'>): void {
  const guard = gateway.clientKeys;
  const find = (id: string): ClientKeyRecord => {
    const record = guard.get(id);
    if (!record) throw new ApiError('not_found', `no client key has the id ${JSON.stringify(id)}`);
    return record;
  };
  /** Durable first, then in force: a key the store lost is never served. */
  const save = async (record: ClientKeyRecord) => {
    await guard.store.put(record);
    guard.apply(record);
    return guard.view(record);
  };

  app.openapi(
    createRoute({
      method: 'post',
      path: base,
      tags,
      security,
      summary: 'Create a client key; the answer holds its secret, shown this once',
      request: { body: { required: true, content: { 'application/json': { schema: CreateClientKeySchema } } } },
      responses: { 201: jsonResponse(CreatedSchema, 'The key and its secret'), ...errors422, ...protectedErrors },
    }),
    async (c) => {
      const { record, secret } = createRecord(c.req.valid('json'), gateway.scheduler.now());
      return c.json({ key: await save(record), secret }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: base,
      tags,
      security,
      summary: 'Every client key (never a secret), oldest first; ?tenant= and ?revoked= filter',
      request: { query: ListQuery },
      responses: { 200: jsonResponse(z.object({ keys: z.array(ClientKeyViewSchema) }), 'The keys'), ...protectedErrors },
    }),
    (c) => {
      const { tenant, revoked } = c.req.valid('query');
      const records = guard
        .records()
        .filter((record) => tenant === undefined || record.tenant === tenant)
        .filter((record) => revoked === undefined || record.revoked === (revoked === 'true'));
      return c.json({ keys: records.map((record) => guard.view(record)) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: `${base}/{id}`,
      tags,
      security,
      summary: 'One client key (never its secret)',
      request: { params: IdPath },
      responses: { 200: jsonResponse(ClientKeyViewSchema, 'The key'), ...notFound, ...protectedErrors },
    }),
    (c) => c.json(guard.view(find(c.req.valid('param').id)), 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: `${base}/{id}`,
      tags,
      security,
      summary: "Change a key's name, tenant, models, rates, budget or expiry (null clears a limit)",
      request: { params: IdPath, body: { required: true, content: { 'application/json': { schema: UpdateClientKeySchema } } } },
      responses: {
        200: jsonResponse(ClientKeyViewSchema, 'The key as it now is'),
        409: jsonResponse(ErrorSchema, 'The key is revoked'),
        ...notFound,
        ...errors422,
        ...protectedErrors,
      },
    }),
    async (c) => {
      const record = find(c.req.valid('param').id);
      if (record.revoked) throw new ApiError('conflict', 'a revoked key cannot be changed; create a new one');
      return c.json(await save(applyUpdate(record, c.req.valid('json'), gateway.scheduler.now())), 200);
    },
  );

  const revoke = async (id: string) => {
    const record = find(id);
    if (record.revoked) return guard.view(record);
    const at = new Date(gateway.scheduler.now()).toISOString();
    return save({ ...record, revoked: true, revoked_at: at, updated_at: at });
  };
  for (const [method, path] of [
    ['post', `${base}/{id}/revoke`],
    ['delete', `${base}/{id}`],
  ] as const) {
    app.openapi(
      createRoute({
        method,
        path,
        tags,
        security,
        summary: 'Revoke a key: refused from now on, on every node; kept (revoked) for the record',
        request: { params: IdPath },
        responses: { 200: jsonResponse(ClientKeyViewSchema, 'The revoked key'), ...notFound, ...protectedErrors },
      }),
      async (c) => c.json(await revoke(c.req.valid('param').id), 200),
    );
  }
}
