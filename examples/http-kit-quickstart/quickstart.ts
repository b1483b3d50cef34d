import { ApiError, bodyCap, methodNotAllowedOrNotFound, respondError } from '@switchyard/http-kit';
import { Hono } from 'hono';

const app = new Hono();
// Handlers throw ApiError; anything else is a 500 that never echoes its message.
app.onError((error, c) =>
  error instanceof ApiError
    ? respondError(c, error.code, error.message, error.details, error.headers)
    : respondError(c, 'internal', 'internal error'),
);
app.notFound(methodNotAllowedOrNotFound(app)); // 405 with Allow where another method is served, else 404
app.use('/notes', bodyCap(64, 'a note must be at most 64 bytes')); // judged by Content-Length, before the body is read
app.post('/notes', async (c) => {
  const { text } = await c.req.json<{ text?: unknown }>();
  if (typeof text !== 'string') throw new ApiError('validation_failed', 'text must be a string', { details: { field: 'text' } });
  return c.json({ saved: text }, 201);
});

const post = (note: unknown) => {
  const body = JSON.stringify(note);
  return { method: 'POST', body, headers: { 'content-type': 'application/json', 'content-length': String(body.length) } };
};
for (const [path, init] of [
  ['/notes', post({ text: 'buy milk' })],
  ['/notes', post({ text: 42 })],
  ['/notes', post({ text: 'x'.repeat(100) })],
  ['/notes', { method: 'DELETE' }],
  ['/nowhere', { method: 'GET' }],
] as const) {
  const res = await app.request(path, init);
  console.log(res.status, res.headers.get('allow') ?? '-', await res.text());
}
