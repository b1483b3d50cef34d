/**
 * @module providerQuota
 * `GET /v0/management/provider-a-quota[?auth_index=N]`: the quota snapshot
 * of the code-assistant credential at `auth_index` of the `/auth-files`
 * listing, or of every code-assistant credential when `auth_index` is
 * absent. Figures come from the provider's quota endpoint
 * (`providers.<p>.options.quota_url`) when it has one, else from the local
 * quota tracker (see `quotaSnapshot`).
 */
import { createRoute, z } from '@hono/zod-openapi';
import { ApiError, fieldDetail } from '@switchyard/http-kit';
import type { ControlPlaneApp, GatewayParts } from '../parts.js';
import { fetchProviderQuota, type QuotaSnapshot } from '../quotaSnapshot.js';
import { type AuthFile, credentialAt, listAuthFiles } from './authFiles.js';
import { ErrorSchema, jsonResponse, protectedErrors } from './schemas.js';

/** The provider kind this route reports on. */
const KIND = 'code-assistant';

const QuotaSnapshotSchema = z
  .object({
    auth_index: z.number().int(),
    id: z.string(),
    provider: z.string(),
    source: z.enum(['provider', 'local']),
    limit: z.number().nullable(),
    used: z.number().nullable(),
    remaining: z.number().nullable(),
    resets_at: z.string().nullable(),
    fetched_at: z.string(),
    error: z.string().optional().openapi({ description: "Why the provider's figures are missing; the local ones are given instead" }),
  })
  .openapi('QuotaSnapshot');

const Query = z.object({
  auth_index: z
    .string()
    .regex(/^(0|[1-9][0-9]{0,8})$/, 'auth_index is a non-negative integer')
    .optional()
    .openapi({ param: { name: 'auth_index', in: 'query' }, example: '0' }),
});

/** The provider of a listed credential, when that provider is a configured code assistant. */
function codeAssistantOf(gateway: Pick<GatewayParts, 'config' | 'scheduler' | 'credentials' | 'guardedHosts'>, file: AuthFile) {
  const block = gateway.config().providers[file.provider];
  return block?.kind === KIND ? block : undefined;
}

async function snapshotOf(
  gateway: Pick<GatewayParts, 'config' | 'scheduler' | 'credentials' | 'guardedHosts'>,
  file: AuthFile,
  token: string,
): Promise<QuotaSnapshot> {
  const fetchedAt = () => new Date(gateway.scheduler.now()).toISOString();
  const base = { auth_index: file.auth_index, id: file.id, provider: file.provider };
  const url = codeAssistantOf(gateway, file)?.options.quota_url;
  let error: string | undefined;
  if (typeof url === 'string') {
    try {
      const policy = { allow: gateway.config()['remote-management']['api-call-allow'] };
      const figures = await fetchProviderQuota(url, token, policy, gateway.guardedHosts.resolve);
      return { ...base, source: 'provider', ...figures, fetched_at: fetchedAt() };
    } catch (failure) {
      error = (failure as Error).message;
    }
  }
  const local = gateway.credentials.manager.describe(file.id).quota;
  return {
    ...base,
    source: 'local',
    limit: local.limit,
    used: local.used,
    remaining: local.remaining,
    resets_at: local.resets_at,
    fetched_at: fetchedAt(),
    ...(error === undefined ? {} : { error }),
  };
}

export function registerProviderQuotaRoute(
  app: ControlPlaneApp,
  gateway: Pick<GatewayParts, 'config' | 'scheduler' | 'credentials' | 'guardedHosts'>,
): void {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v0/management/provider-a-quota',
      tags: ['credentials'],
      security: [{ managementKey: [] }],
      summary: "Quota snapshots of the code-assistant credentials: from the provider's quota_url when configured, else the local tracker",
      request: { query: Query },
      responses: {
        200: jsonResponse(z.object({ snapshots: z.array(QuotaSnapshotSchema) }), 'One snapshot, or one per code-assistant credential'),
        400: jsonResponse(ErrorSchema, '`auth_index` is not a non-negative integer'),
        ...protectedErrors,
        404: jsonResponse(
          ErrorSchema,
          'No credential at auth_index, or not a code-assistant credential (every route, when no secret key is set)',
        ),
      },
    }),
    async (c) => {
      const { auth_index: index } = c.req.valid('query');
      if (index !== undefined) {
        const { file, token } = await credentialAt(gateway, Number(index));
        if (!codeAssistantOf(gateway, file)) {
          throw new ApiError('credential_not_found', `the credential at auth_index ${index} is not a ${KIND} credential`, {
            details: fieldDetail('auth_index', 'no credential of this kind at this index'),
          });
        }
        return c.json({ snapshots: [await snapshotOf(gateway, file, token)] }, 200);
      }
      const files = (await listAuthFiles(gateway)).filter((file) => codeAssistantOf(gateway, file));
      const snapshots = await Promise.all(
        files.map(async (file) => {
          const credential = await gateway.credentials.opened.store.get(file.id);
          return credential ? snapshotOf(gateway, file, credential.token) : undefined;
        }),
      );
      return c.json({ snapshots: snapshots.filter((s) => s !== undefined) }, 200);
    },
  );
}
