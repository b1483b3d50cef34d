/**
 * @module schemas
 * Schemas shared by the control-plane routes, for validation and for
 * `/openapi.json`.
 */
import { z } from '@hono/zod-openapi';

/** The one error body of the control plane. */
export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'provider_not_found' }),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  })
  .openapi('Error');

/** Responses every protected route may give. */
export const protectedErrors = {
  401: { description: 'Missing or wrong management key', content: { 'application/json': { schema: ErrorSchema } } },
  403: {
    description: 'Remote management is disabled and the client is not local',
    content: { 'application/json': { schema: ErrorSchema } },
  },
  404: { description: 'Not found (every route, when no secret key is set)', content: { 'application/json': { schema: ErrorSchema } } },
  429: { description: 'Locked out after repeated wrong keys; see Retry-After', content: { 'application/json': { schema: ErrorSchema } } },
} as const;

/** A JSON response with a schema. */
export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } };
}

/** A path parameter naming a provider. */
export const ProviderParam = z.object({
  p: z
    .string()
    .min(1)
    .openapi({ param: { name: 'p', in: 'path' }, example: 'openai' }),
});
