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
