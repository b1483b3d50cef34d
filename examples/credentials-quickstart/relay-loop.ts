/**
 * How a relay uses a pool: acquire a credential per attempt, report what
 * happened, retry on another credential after a 429, refresh after a 401.
 * The upstream here is a stand-in that rate-limits one key.
 */
import { type AcquiredCredential, CredentialManager, MemoryCredentialStore, NoCredentials } from '@switchyard/credentials';

const manager = new CredentialManager({ store: new MemoryCredentialStore() });
await manager.start();
await manager.add({ id: 'openai-a', provider: 'openai', type: 'api_key', token: 'sk-a' });
await manager.add({ id: 'openai-b', provider: 'openai', type: 'api_key', token: 'sk-b' });

/** A stand-in upstream: key "sk-a" is rate-limited. */
async function upstream(
  credential: AcquiredCredential,
): Promise<{ status: number; usage?: { inputTokens: number; outputTokens: number } }> {
  return credential.token === 'sk-a' ? { status: 429 } : { status: 200, usage: { inputTokens: 120, outputTokens: 30 } };
}

async function relay(): Promise<string> {
  const pool = manager.pool('openai');
  const tried = new Set<string>();
  for (;;) {
    let credential: AcquiredCredential;
    try {
      credential = pool.acquire({ exclude: tried });
    } catch (error) {
      if (error instanceof NoCredentials) return `503 (retry at ${error.retryAt ? new Date(error.retryAt).toISOString() : 'unknown'})`;
      throw error;
    }
    tried.add(credential.id);
    const response = await upstream(credential);
    if (response.status === 429) pool.reportFailure(credential.id, { kind: 'rate_limit', retryAfterMs: 30_000 });
    else if (response.status === 401)
      await pool.refresh(credential.id).catch(() => pool.reportFailure(credential.id, { kind: 'unauthorized' }));
    else {
      pool.reportSuccess(credential.id, response.usage);
      return `200 via ${credential.id}`;
    }
  }
}

console.log(await relay());
console.log(await relay());
console.log(
  manager
    .list()
    .map((c) => `${c.id}: ${c.unavailable_reason ?? 'available'}, ${c.quota.used} tokens`)
    .join('\n'),
);
await manager.close();
