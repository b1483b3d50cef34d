/**
 * @module authFiles
 * `/v0/management/auth-files`: the credential files in `auth-dir`, as an
 * operator browsing the directory sees them (name, size, modification time)
 * joined with what the gateway knows of each (provider, status, priority,
 * last refresh). `auth_index` is the file's position in this listing (by
 * name), the handle other tools use to name a credential without its id.
 * Contents never leave: a file is added as JSON and listed as metadata.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { ApiError } from '@switchyard/http-kit';
import type { ControlPlaneApp, GatewayParts } from '../parts.js';
import { ErrorSchema, jsonResponse, protectedErrors } from './schemas.js';

const tags = ['credentials'];
const security = [{ managementKey: [] }];

const AuthFileSchema = z
  .object({
    id: z.string(),
    auth_index: z.number().int(),
    name: z.string(),
    type: z.string(),
    provider: z.string(),
    status: z.string(),
    status_message: z.string().nullable(),
    disabled: z.boolean(),
    priority: z.number(),
    size: z.number(),
    modtime: z.string(),
    last_refresh: z.string().nullable(),
    expires_at: z.string().nullable(),
  })
  .openapi('AuthFile');
/** One entry of the `/auth-files` listing. */
export type AuthFile = z.infer<typeof AuthFileSchema>;

const NameQuery = z.object({
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.@-]*\.json$/, 'a file name in auth-dir, such as openai-main.json')
    .openapi({ param: { name: 'name', in: 'query' }, example: 'openai-main.json' }),
});

/**
 * The credentials of a store without files (a cluster's PostgreSQL), as the files they would be:
 * `<id>.json`, the size of the record as JSON, its last change as the modification time.
 */
async function storedAsFiles(
  gateway: Pick<GatewayParts, 'credentials'>,
): Promise<{ id: string; name: string; size: number; modified_at: string }[]> {
  const credentials = await gateway.credentials.opened.store.list();
  return credentials.map((credential) => ({
    id: credential.id,
    name: `${credential.id}.json`,
    size: Buffer.byteLength(JSON.stringify(credential)),
    modified_at: credential.updated_at,
  }));
}

/**
 * The listing, in name order; `auth_index` is the position in it. With
 * cluster.enabled the credentials live in PostgreSQL: they are listed in the
 * same shape, each as the file it would be, so `auth_index` means the same on
 * every node.
 */
export async function listAuthFiles(gateway: Pick<GatewayParts, 'credentials'>): Promise<AuthFile[]> {
  const { manager, opened } = gateway.credentials;
  const files = (opened.fileStore ? await opened.fileStore.files() : await storedAsFiles(gateway)).sort((a, b) =>
    a.name.localeCompare(b.name),
  );
  const out: AuthFile[] = [];
  for (const file of files) {
    let record: ReturnType<typeof manager.describe>;
    try {
      record = manager.describe(file.id);
    } catch {
      continue; // a file the manager has not loaded (unreadable, or written this instant)
    }
    out.push({
      id: file.id,
      auth_index: out.length,
      name: file.name,
      type: record.type,
      provider: record.provider,
      status: record.status,
      status_message: record.status_message,
      disabled: record.status === 'disabled',
      priority: record.priority,
      size: file.size,
      modtime: file.modified_at,
      last_refresh: gateway.credentials.lastRefresh(file.id),
      expires_at: record.expires_at,
    });
  }
  return out;
}

/** The file at `auth_index` of the listing and its credential's token; 404 `credential_not_found` when there is none. */
export async function credentialAt(gateway: Pick<GatewayParts, 'credentials'>, index: number): Promise<{ file: AuthFile; token: string }> {
  const file = (await listAuthFiles(gateway))[index];
  const credential = file ? await gateway.credentials.opened.store.get(file.id) : undefined;
  if (!file || !credential) throw new ApiError('credential_not_found', `no credential at auth_index ${index}`);
  return { file, token: credential.token };
}

function idOf(gateway: Pick<GatewayParts, 'credentials'>, name: string): string {
  const id = name.slice(0, -'.json'.length);
  try {
    gateway.credentials.manager.describe(id);
  } catch {
    throw new ApiError('credential_not_found', `auth-dir has no credential file ${JSON.stringify(name)}`);
  }
  return id;
}

export function registerAuthFileRoutes(app: ControlPlaneApp, gateway: Pick<GatewayParts, 'credentials'>): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/management/auth-files',
      tags,
      security,
      summary: 'The credential files in auth-dir, with what the gateway knows of each (never their contents)',
      responses: { 200: jsonResponse(z.object({ files: z.array(AuthFileSchema) }), 'The files'), ...protectedErrors },
    }),
    async (c) => c.json({ files: await listAuthFiles(gateway) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v0/management/auth-files',
      tags,
      security,
      summary: 'Add a credential file (the same JSON as POST /auths); written with mode 0600',
      request: { body: { required: true, content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } } },
      responses: {
        201: jsonResponse(AuthFileSchema, 'The new file'),
        409: jsonResponse(ErrorSchema, 'A credential with this id exists'),
        422: jsonResponse(ErrorSchema, 'Not a valid credential'),
        ...protectedErrors,
      },
    }),
    async (c) => {
      const record = await gateway.credentials.manager.add(c.req.valid('json') as never);
      const file = (await listAuthFiles(gateway)).find((f) => f.id === record.id);
      if (!file) throw new ApiError('internal', 'the credential was stored but its file is not listed');
      return c.json(file, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v0/management/auth-files',
      tags,
      security,
      summary: 'Delete a credential file by name',
      request: { query: NameQuery },
      responses: { 200: jsonResponse(z.object({ deleted: z.string() }), 'The file deleted'), ...protectedErrors },
    }),
    async (c) => {
      const { name } = c.req.valid('query');
      await gateway.credentials.manager.delete(idOf(gateway, name));
      return c.json({ deleted: name }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/v0/management/auth-files/status',
      tags,
      security,
      summary: 'Disable a credential (taken out of rotation) or enable it again',
      request: {
        body: {
          required: true,
          content: { 'application/json': { schema: z.object({ name: NameQuery.shape.name, disabled: z.boolean() }) } },
        },
      },
      responses: {
        200: jsonResponse(AuthFileSchema, 'The file as it now is'),
        422: jsonResponse(ErrorSchema, 'A bad name or a non-boolean `disabled`'),
        ...protectedErrors,
      },
    }),
    async (c) => {
      const { name, disabled } = c.req.valid('json');
      const id = idOf(gateway, name);
      await gateway.credentials.manager.update(id, { status: disabled ? 'disabled' : 'active' });
      const file = (await listAuthFiles(gateway)).find((f) => f.id === id);
      if (!file) throw new ApiError('credential_not_found', `auth-dir has no credential file ${JSON.stringify(name)}`);
      return c.json(file, 200);
    },
  );
}
