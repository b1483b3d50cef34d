/**
 * The client keys the client-keys and key-accounting benchmarks hold: `count` keys with every limit on (a
 * model list with a glob, request and token rates per minute, a daily token budget), spread over 50 tenants,
 * written to a fresh directory's `.client-keys.json` as a gateway would find it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLIENT_KEYS_FILE, type ClientKeyRecord, CreateClientKeySchema, createRecord } from '@switchyard/server-http';

/** Writes `count` keys with limits into a fresh directory (removed by the caller); returns it, the secrets and the records. */
export function authDirWithKeys(count: number): { dir: string; secrets: string[]; records: ClientKeyRecord[] } {
  const dir = mkdtempSync(join(tmpdir(), 'bench-client-keys-'));
  const secrets: string[] = [];
  const records: ClientKeyRecord[] = [];
  for (let i = 0; i < count; i++) {
    const body = CreateClientKeySchema.parse({
      name: `bench-${i}`,
      tenant: `tenant-${i % 50}`,
      models: ['other-*', 'bench-model'],
      requests_per_minute: 1_000_000,
      tokens_per_minute: 1_000_000_000,
      budget: { limit: 1e12, unit: 'tokens', period: 'daily' },
    });
    const { record, secret } = createRecord(body, Date.now());
    records.push(record);
    secrets.push(secret);
  }
  writeFileSync(join(dir, CLIENT_KEYS_FILE), JSON.stringify({ format_version: 1, keys: records, budget_use: {} }), { mode: 0o600 });
  return { dir, secrets, records };
}
