/**
 * @module apiCall
 * `POST /v0/management/api-call`: make one HTTP call on the operator's
 * behalf with a stored credential, e.g. to read a provider's own usage page.
 * `$TOKEN$` in the URL, a header value or the body becomes the token of the
 * credential at `auth_index` (as `/auth-files` numbers them), so the token
 * never passes through the operator's tooling.
 *
 * Because the gateway makes the call, it is guarded against server-side
 * request forgery: only http(s), and every address the host resolves to is
 * checked at connect time (loopback, private, link-local, metadata … are
 * refused unless named in `remote-management.api-call-allow`). Redirects are
 * not followed (a redirect could lead past the check). 60 s timeout; the
 * answer's body is capped at 1 MiB.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { ApiError, fieldDetail } from '@switchyard/http-kit';
import { readCappedBody } from '@switchyard/runtime';
import { request } from 'undici';
import { assertCallableUrl, guardedAgent, SsrfBlocked } from '../../controlPlane/ssrf.js';
import type { ControlPlaneApp, GatewayParts } from '../parts.js';
import { credentialAt } from './authFiles.js';
import { ErrorSchema, jsonResponse, protectedErrors } from './schemas.js';

const TOKEN_PLACEHOLDER = '$TOKEN$';
const TIMEOUT_MS = 60_000;
const MAX_BODY_BYTES = 1024 * 1024;

const ApiCallSchema = z.strictObject({
  auth_index: z.number().int().min(0).optional(),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']).default('GET'),
  url: z.string().min(1).max(8192),
  header: z.record(z.string(), z.string()).default({}),
  data: z.string().max(MAX_BODY_BYTES).optional(),
});
const ApiCallResultSchema = z.object({
  status_code: z.number().int(),
  header: z.record(z.string(), z.array(z.string())),
  body: z.string(),
});

export function registerApiCallRoute(app: ControlPlaneApp, gateway: Pick<GatewayParts, 'config' | 'observability' | 'credentials'>): void {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v0/management/api-call',
      tags: ['credentials'],
      security: [{ managementKey: [] }],
      summary: 'Make one HTTP call with a stored credential ($TOKEN$ is replaced); guarded against SSRF',
      request: { body: { required: true, content: { 'application/json': { schema: ApiCallSchema } } } },
      responses: {
        ...protectedErrors,
        200: jsonResponse(ApiCallResultSchema, "The upstream's answer, whatever its status"),
        403: jsonResponse(ErrorSchema, 'The destination is in a refused address range, or remote management is off for this client'),
        422: jsonResponse(ErrorSchema, 'A bad body or URL, or $TOKEN$ without auth_index'),
        502: jsonResponse(ErrorSchema, 'The call failed (connection, or an answer over 1 MiB)'),
        504: jsonResponse(ErrorSchema, 'No answer within 60 s'),
      },
    }),
    async (c) => {
      const call = c.req.valid('json');
      const usesToken = [call.url, call.data ?? '', ...Object.values(call.header)].some((v) => v.includes(TOKEN_PLACEHOLDER));
      if (usesToken && call.auth_index === undefined) {
        throw new ApiError('validation_failed', `${TOKEN_PLACEHOLDER} needs auth_index`, {
          details: fieldDetail('auth_index', 'required by the token placeholder'),
        });
      }
      const token = call.auth_index === undefined ? '' : (await credentialAt(gateway, call.auth_index)).token;
      const fill = (value: string) => value.split(TOKEN_PLACEHOLDER).join(token);
      const policy = { allow: gateway.config()['remote-management']['api-call-allow'] };
      let url: URL;
      try {
        url = assertCallableUrl(fill(call.url), policy);
      } catch (error) {
        if (error instanceof SsrfBlocked) throw new ApiError('forbidden', error.message, { details: { range: error.range } });
        throw new ApiError('validation_failed', (error as Error).message.split(token || '\0').join('***'), {
          details: fieldDetail('url', 'not callable'),
        });
      }
      const dispatcher = guardedAgent(policy);
      try {
        const answer = await request(url, {
          method: call.method,
          headers: Object.fromEntries(Object.entries(call.header).map(([k, v]) => [k, fill(v)])),
          ...(call.data === undefined ? {} : { body: fill(call.data) }),
          dispatcher,
          headersTimeout: TIMEOUT_MS,
          bodyTimeout: TIMEOUT_MS,
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
        const body = await readCappedBody(answer.body, MAX_BODY_BYTES, {
          tooLarge: () => new ApiError('bad_gateway', `the answer is larger than ${MAX_BODY_BYTES} bytes`),
        });
        const header: Record<string, string[]> = {};
        for (const [name, value] of Object.entries(answer.headers)) {
          if (value !== undefined) header[name] = Array.isArray(value) ? value : [value];
        }
        gateway.observability.logger.info({ method: call.method, host: url.host, status: answer.statusCode }, 'management_api_call');
        return c.json({ status_code: answer.statusCode, header, body: body.toString('utf8') }, 200);
      } catch (error) {
        if (error instanceof ApiError) throw error;
        const cause = (error as { cause?: unknown }).cause ?? error;
        if (cause instanceof SsrfBlocked) throw new ApiError('forbidden', cause.message, { details: { range: cause.range } });
        const name = (error as Error).name;
        if (name === 'TimeoutError' || name === 'HeadersTimeoutError' || name === 'BodyTimeoutError') {
          throw new ApiError('gateway_timeout', `no answer from ${url.host} within ${TIMEOUT_MS / 1000} s`);
        }
        throw new ApiError('bad_gateway', `the call to ${url.host} failed: ${(error as Error).message}`);
      } finally {
        await dispatcher.close();
      }
    },
  );
}
