import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRoute, z } from '@hono/zod-openapi';
import { createControlPlaneApp } from './controlPlaneApp.js';

const route = createRoute({
  method: 'post',
  path: '/things/{id}',
  request: {
    params: z.object({ id: z.string().regex(/^\d+$/) }),
    body: { content: { 'application/json': { schema: z.object({ name: z.string().min(1), size: z.number().int() }).strict() } } },
  },
  responses: { 200: { description: 'ok' } },
});

const app = createControlPlaneApp();
app.openapi(route, (c) => c.json({ ok: true, name: c.req.valid('json').name }, 200));

const post = (path: string, body: unknown) =>
  app.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

test('a body that breaks the schema is 422 validation_failed naming the first field, with every issue', async () => {
  const response = await post('/things/7', { name: '', size: 1.5 });
  assert.equal(response.status, 422);
  const body = (await response.json()) as {
    error: { code: string; message: string; details: { field: string; issues: { field: string }[] } };
  };
  assert.equal(body.error.code, 'validation_failed');
  assert.equal(body.error.details.field, 'name');
  assert.match(body.error.message, /^name: /);
  assert.deepEqual(
    body.error.details.issues.map((issue) => issue.field),
    ['name', 'size'],
  );
});

test('an unknown key is reported at the key itself', async () => {
  const response = await post('/things/7', { name: 'a', size: 1, colour: 'red' });
  const body = (await response.json()) as { error: { details: { field: string } } };
  assert.equal(response.status, 422);
  assert.equal(body.error.details.field, 'colour');
});

test('a bad path parameter is 400 bad_request in the same shape', async () => {
  const response = await post('/things/seven', { name: 'a', size: 1 });
  assert.equal(response.status, 400);
  const body = (await response.json()) as { error: { code: string; details: { field: string } } };
  assert.deepEqual([body.error.code, body.error.details.field], ['bad_request', 'id']);
});

test('a valid request reaches the handler', async () => {
  const response = await post('/things/7', { name: 'a', size: 1 });
  assert.deepEqual([response.status, await response.json()], [200, { ok: true, name: 'a' }]);
});
