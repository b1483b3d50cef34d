/**
 * @module methodNotAllowed
 * The one check every control-plane API's tests make of a wrong method:
 * 405, `Allow`, and the `method_not_allowed` error naming the methods.
 */
import assert from 'node:assert/strict';

/**
 * Asserts `response` is `405 method_not_allowed` with `Allow: allow`, and
 * that its message names the allowed methods.
 *
 * @example
 * ```ts
 * await assertMethodNotAllowed(await fetch(`${url}/status`, { method: 'DELETE' }), 'GET, HEAD', 'DELETE /status');
 * ```
 */
export async function assertMethodNotAllowed(response: Response, allow: string, what: string): Promise<void> {
  assert.equal(response.status, 405, what);
  assert.equal(response.headers.get('allow'), allow, what);
  const { error } = (await response.json()) as { error: { code: string; message: string } };
  assert.equal(error.code, 'method_not_allowed', what);
  assert.ok(error.message.includes(allow), `${what}: ${error.message}`);
}
