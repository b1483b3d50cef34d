import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Hono } from 'hono';
import { allowedMethods, methodNotAllowedOrNotFound } from './allowedMethods.js';

describe('allowedMethods', () => {
  const app = new Hono();
  app.use('*', async (_c, next) => next());
  app.use('/items/*', async (_c, next) => next());
  app.get('/items', (c) => c.text('list'));
  app.post('/items', (c) => c.text('created'));
  app.put('/items/:id', (c) => c.text('replaced'));
  app.delete('/items/:id', (c) => c.text('deleted'));
  app.patch('/items/:id{[0-9]+}/status', (c) => c.text('patched'));
  const allowedAt = allowedMethods(app);

  test('lists the methods of every route matching the path, with HEAD beside GET', () => {
    assert.deepEqual(allowedAt('/items'), ['GET', 'HEAD', 'POST']);
    assert.deepEqual(allowedAt('/items/42'), ['DELETE', 'PUT']);
  });

  test('matches parameters with their patterns, as the app itself does', () => {
    assert.deepEqual(allowedAt('/items/42/status'), ['PATCH']);
    assert.deepEqual(allowedAt('/items/abc/status'), []);
  });

  test('middleware alone serves nothing: a path only middleware covers has no methods', () => {
    assert.deepEqual(allowedAt('/items/42/other'), []);
    assert.deepEqual(allowedAt('/nowhere'), []);
  });

  test('a route registered after the first lookup is seen', () => {
    const late = new Hono();
    late.get('/a', (c) => c.text('a'));
    const lookup = allowedMethods(late);
    assert.deepEqual(lookup('/b'), []);
    late.post('/b', (c) => c.text('b'));
    assert.deepEqual(lookup('/b'), ['POST']);
  });
});

describe('methodNotAllowedOrNotFound', () => {
  const app = new Hono();
  app.get('/items', (c) => c.text('list'));
  app.post('/items', (c) => c.text('created'));
  app.notFound(methodNotAllowedOrNotFound(app, ['OPTIONS']));

  test('a wrong method is 405 with Allow, including what middleware serves everywhere', async () => {
    const response = await app.request('/items', { method: 'DELETE' });
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'GET, HEAD, OPTIONS, POST');
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    assert.equal(error.code, 'method_not_allowed');
    assert.equal(error.message, 'DELETE is not allowed on /items; use GET, HEAD, OPTIONS, POST');
  });

  test('a path no route has is 404 without Allow', async () => {
    const response = await app.request('/nowhere', { method: 'DELETE' });
    assert.equal(response.status, 404);
    assert.equal(response.headers.get('allow'), null);
    assert.deepEqual(await response.json(), { error: { code: 'not_found', message: 'no route for DELETE /nowhere' } });
  });
});
