/**
 * @module credentials (routes)
 * `/v0/management/auths`: the gateway's credentials, thin over the
 * `CredentialManager`. Tokens go in (POST) and never come out: every answer
 * is a status record (id, provider, type, status, quota, cooldown, …).
 * Errors of the credentials package become control-plane errors here, so a
 * client sees 404 / 409 / 422 / 502 with a stable code, never a 500 for its
 * own mistake.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { type CredentialStatusRecord, CredentialsError, type CredentialsErrorCode } from '@switchyard/credentials';
import { ApiError, type ApiErrorCode, fieldDetail, fieldDetails } from '@switchyard/http-kit';
import type { ControlPlaneApp, GatewayParts } from '../parts.js';
import { ErrorSchema, jsonResponse, protectedErrors } from './schemas.js';

const tags = ['credentials'];
const security = [{ managementKey: [] }];

/** How each credentials error reaches a management client. */
const CREDENTIALS_ERROR_CODES: Partial<Record<CredentialsErrorCode, ApiErrorCode>> = {
  credential_not_found: 'credential_not_found',
  credential_exists: 'conflict',
  revision_conflict: 'conflict',
  invalid_credential: 'validation_failed',
  invalid_argument: 'validation_failed',
  invalid_config: 'validation_failed',
  path_not_allowed: 'validation_failed',
  not_refreshable: 'conflict',
  refresh_backoff: 'conflict',
  refresh_failed: 'bad_gateway',
  refresh_rejected: 'bad_gateway',
  // A sign-in the authorization server refused or could not answer.
  authorization_failed: 'bad_gateway',
  flow_not_found: 'flow_not_found',
  too_many_pending: 'too_many_requests',
  closed: 'service_unavailable',
  not_implemented: 'not_implemented',
};

/** A credentials error as an {@link ApiError}, or undefined for the ones that are the gateway's fault. */
export function credentialsApiError(error: unknown): ApiError | undefined {
  if (!(error instanceof CredentialsError)) return undefined;
  const code = CREDENTIALS_ERROR_CODES[error.code];
  if (!code) return undefined;
  const details = error.issues ? fieldDetails(error.issues) : error.field ? fieldDetail(error.field, error.message) : undefined;
  return new ApiError(code, error.message, details === undefined ? {} : { details });
}

const StatusRecord = z.record(z.string(), z.unknown()).openapi('CredentialStatus');
const ListSchema = z.object({ auths: z.array(StatusRecord) });
const ProviderPath = z.object({
  provider: z
    .string()
    .min(1)
    .openapi({ param: { name: 'provider', in: 'path' }, example: 'openai' }),
});
/** `PUT /auths/{provider}/quota`: tokens per quota period; null lifts the limit. */
const QuotaLimitBody = z.strictObject({
  limit: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable().openapi({ example: 1_000_000 }),
});
const IdQuery = z.object({
  id: z
    .string()
    .min(1)
    .optional()
    .openapi({ param: { name: 'id', in: 'query' }, description: 'Which credential, when the provider has several' }),
});
const errors422 = { 422: jsonResponse(ErrorSchema, 'Invalid input; `details` names the fields') };

/** The one credential of a provider that `?id=` names, or its only one; 409 when ambiguous. */
function pick(gateway: Pick<GatewayParts, 'credentials'>, provider: string, id: string | undefined): CredentialStatusRecord {
  const records = gateway.credentials.manager.list(provider);
  if (id !== undefined) {
    const record = records.find((r) => r.id === id);
    if (!record) throw new ApiError('credential_not_found', `provider ${provider} has no credential ${JSON.stringify(id)}`);
    return record;
  }
  if (records.length === 0) throw new ApiError('credential_not_found', `provider ${provider} has no credentials`);
  if (records.length > 1) {
    throw new ApiError('conflict', `provider ${provider} has ${records.length} credentials; name one with ?id=`, {
      details: { ids: records.map((r) => r.id) },
    });
  }
  return records[0]!;
}

export function registerCredentialRoutes(app: ControlPlaneApp, gateway: Pick<GatewayParts, 'credentials'>): void {
  const manager = () => gateway.credentials.manager;

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/management/auths',
      tags,
      security,
      summary: 'Every credential, as status records (never the token)',
      responses: { 200: jsonResponse(ListSchema, 'The credentials'), ...protectedErrors },
    }),
    (c) => c.json({ auths: manager().list() as unknown as Record<string, unknown>[] }, 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v0/management/auths',
      tags,
      security,
      summary: 'Add a credential (id, provider, type, token, priority, quota, label, …); written to auth-dir',
      request: { body: { required: true, content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } } },
      responses: {
        201: jsonResponse(StatusRecord, 'The new credential'),
        409: jsonResponse(ErrorSchema, 'A credential with this id exists'),
        ...errors422,
        ...protectedErrors,
      },
    }),
    async (c) => c.json((await manager().add(c.req.valid('json') as never)) as unknown as Record<string, unknown>, 201),
  );

  // Before `/auths/{provider}`, which would otherwise take "refresh" as a provider name.
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/management/auths/refresh/status',
      tags,
      security,
      summary: "The refresh worker's status",
      responses: { 200: jsonResponse(z.record(z.string(), z.unknown()), 'Its status'), ...protectedErrors },
    }),
    (c) => c.json(manager().refreshStatus() as unknown as Record<string, unknown>, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/management/auths/{provider}',
      tags,
      security,
      summary: "A provider's credentials",
      request: { params: ProviderPath },
      responses: { 200: jsonResponse(ListSchema, 'The credentials (possibly none)'), ...protectedErrors },
    }),
    (c) => c.json({ auths: manager().list(c.req.valid('param').provider) as unknown as Record<string, unknown>[] }, 200),
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v0/management/auths/{provider}',
      tags,
      security,
      summary: 'Change a credential (token, priority, status, label, quota); ?id= when the provider has several',
      request: {
        params: ProviderPath,
        query: IdQuery,
        body: { required: true, content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } },
      },
      responses: {
        200: jsonResponse(StatusRecord, 'The credential as it now is'),
        409: jsonResponse(ErrorSchema, 'The provider has several credentials and no ?id= was given'),
        ...errors422,
        ...protectedErrors,
      },
    }),
    async (c) => {
      const target = pick(gateway, c.req.valid('param').provider, c.req.valid('query').id);
      return c.json((await manager().update(target.id, c.req.valid('json') as never)) as unknown as Record<string, unknown>, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v0/management/auths/{provider}',
      tags,
      security,
      summary: 'Delete a credential (its file too); ?id= when the provider has several',
      request: { params: ProviderPath, query: IdQuery },
      responses: {
        200: jsonResponse(z.object({ deleted: z.string() }), 'The id deleted'),
        409: jsonResponse(ErrorSchema, 'The provider has several credentials and no ?id= was given'),
        ...protectedErrors,
      },
    }),
    async (c) => {
      const target = pick(gateway, c.req.valid('param').provider, c.req.valid('query').id);
      await manager().delete(target.id);
      return c.json({ deleted: target.id }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v0/management/auths/{provider}/refresh',
      tags,
      security,
      summary: 'Refresh an OAuth credential now; ?id= when the provider has several',
      request: { params: ProviderPath, query: IdQuery },
      responses: {
        200: jsonResponse(StatusRecord, 'The credential after the refresh'),
        409: jsonResponse(ErrorSchema, 'Not refreshable (an API key), or ambiguous'),
        502: jsonResponse(ErrorSchema, 'The token endpoint failed or refused'),
        ...protectedErrors,
      },
    }),
    async (c) => {
      const target = pick(gateway, c.req.valid('param').provider, c.req.valid('query').id);
      return c.json((await manager().refresh(target.id)) as unknown as Record<string, unknown>, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/management/auths/{provider}/quota',
      tags,
      security,
      summary: "A provider's quota: its limit, use and remaining, and each credential's",
      request: { params: ProviderPath },
      responses: { 200: jsonResponse(z.record(z.string(), z.unknown()), 'The quota'), ...protectedErrors },
    }),
    (c) => c.json(manager().quota(c.req.valid('param').provider) as unknown as Record<string, unknown>, 200),
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/v0/management/auths/{provider}/quota',
      tags,
      security,
      summary: "Set a credential's token limit (null for none); ?id= when the provider has several. Answers the provider's quota",
      request: {
        params: ProviderPath,
        query: IdQuery,
        body: { required: true, content: { 'application/json': { schema: QuotaLimitBody } } },
      },
      responses: {
        200: jsonResponse(z.record(z.string(), z.unknown()), "The provider's quota after the change"),
        409: jsonResponse(ErrorSchema, 'The provider has several credentials and no ?id= was given'),
        ...errors422,
        ...protectedErrors,
      },
    }),
    async (c) => {
      const { provider } = c.req.valid('param');
      const target = pick(gateway, provider, c.req.valid('query').id);
      await manager().setQuota(target.id, { limit: c.req.valid('json').limit });
      return c.json(manager().quota(provider) as unknown as Record<string, unknown>, 200);
    },
  );
}
