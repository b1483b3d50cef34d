import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateEncryptionKey } from '@switchyard/credentials';
import { parseConfig } from './load.js';
import { redactConfig } from './persist.js';

test('redactConfig masks the encryption key and every previous key, keeping the list shape', () => {
  const current = generateEncryptionKey();
  const previous = [generateEncryptionKey(), generateEncryptionKey()];
  const config = parseConfig(`
port: 0
auth:
  encryption:
    enabled: true
    key: ${current}
    previous_keys: [${previous.join(', ')}]
providers:
  p: { kind: mock, models: [m] }
metrics: { enabled: false }
`);
  const redacted = redactConfig(config);
  const text = JSON.stringify(redacted);
  for (const key of [current, ...previous]) assert.ok(!text.includes(key), 'an encryption key is shown');
  const encryption = (redacted.auth as { encryption: { key: string; previous_keys: string[] } }).encryption;
  assert.equal(encryption.key, '***');
  assert.deepEqual(encryption.previous_keys, ['***', '***']);
  // The running config itself is untouched.
  assert.deepEqual(config.auth.encryption.previous_keys, previous);
});

test('api-keys may name their holders: a named key keeps its name on display, no key is shown, and both forms serve /v1', async () => {
  const config = parseConfig(`
port: 0
api-keys:
  - sk-plain-client-key
  - { key: sk-named-client-key, name: ci-runner }
providers:
  p: { kind: mock, models: [m] }
metrics: { enabled: false }
`);
  const redacted = redactConfig(config);
  assert.deepEqual(redacted['api-keys'], ['***', { key: '***', name: 'ci-runner', admin: false }]);
  assert.ok(!JSON.stringify(redacted).includes('sk-'), 'a client key is shown');
  const { ApiKeySet } = await import('@switchyard/http-kit');
  const keys = new ApiKeySet(config['api-keys']);
  assert.deepEqual(
    [keys.accepts('sk-plain-client-key'), keys.accepts('sk-named-client-key'), keys.accepts('sk-other')],
    [true, true, false],
  );
  assert.equal(keys.identify('sk-named-client-key')?.name, 'ci-runner');
  assert.throws(
    () => parseConfig('api-keys: [{ key: sk-x }]\n'),
    /api-keys\.0: an api-keys entry is a key, or \{key, name, admin, tenant\}/,
  );
});
