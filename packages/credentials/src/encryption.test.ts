import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { EncryptionKey, generateEncryptionKey, openSecrets, parseEncryptionKey, sealSecrets } from './encryption.js';
import type { CredentialsError } from './errors.js';

const KEY_HEX = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';

describe('encryption keys', () => {
  test('accepts 32 bytes as hex, base64 and base64url, padded or not, and they are the same key', () => {
    const bytes = Buffer.from(KEY_HEX, 'hex');
    const forms = [KEY_HEX, KEY_HEX.toUpperCase(), bytes.toString('base64'), bytes.toString('base64url'), ` ${bytes.toString('base64')}\n`];
    const ids = forms.map((form) => parseEncryptionKey(form).id);
    assert.equal(new Set(ids).size, 1);
    assert.match(ids[0]!, /^[0-9a-f]{16}$/);
    assert.equal(parseEncryptionKey(generateEncryptionKey()).id.length, 16);
  });

  test('refuses other lengths and alphabets with a message that does not repeat the input', () => {
    const secretish = 'this-is-not-a-key-but-might-be-a-password';
    for (const bad of [
      secretish,
      KEY_HEX.slice(2),
      `${KEY_HEX}00`,
      randomBytes(16).toString('base64'),
      randomBytes(33).toString('base64'),
      '',
    ]) {
      assert.throws(
        () => parseEncryptionKey(bad),
        (error: CredentialsError) => {
          assert.equal(error.code, 'invalid_key');
          assert.equal(error.field, 'auth.encryption.key');
          assert.ok(!bad || !error.message.includes(bad));
          return true;
        },
      );
    }
  });

  test('printing, logging or serializing a key shows only its id', () => {
    const key = parseEncryptionKey(KEY_HEX);
    for (const shown of [String(key), inspect(key), JSON.stringify(key), inspect({ nested: { key } })]) {
      assert.ok(shown.includes(key.id), shown);
      assert.ok(!shown.includes(KEY_HEX) && !shown.includes(Buffer.from(KEY_HEX, 'hex').toString('base64')), shown);
    }
  });
});

describe('sealSecrets / openSecrets', () => {
  const key = parseEncryptionKey(KEY_HEX);
  const other = new EncryptionKey(randomBytes(32));

  test('round trip of any JSON value, with a fresh nonce each time', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string(), (value, aad) => {
        const sealed = sealSecrets(value, key, aad);
        assert.deepEqual(openSecrets(sealed, [other, key], aad), JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 300 },
    );
    const a = sealSecrets({ token: 't' }, key, 'x');
    const b = sealSecrets({ token: 't' }, key, 'x');
    assert.notEqual(a.nonce, b.nonce);
    assert.notEqual(a.ciphertext + a.tag, b.ciphertext + b.tag);
  });

  test('any changed bit in the nonce, tag or ciphertext is rejected, never decrypted to garbage', () => {
    const sealed = sealSecrets({ token: 'sk-live-1234567890', refresh_token: 'rt' }, key, 'openai|api_key');
    fc.assert(
      fc.property(fc.constantFrom('nonce', 'tag', 'ciphertext'), fc.nat(), fc.integer({ min: 0, max: 7 }), (field, at, bit) => {
        const bytes = Buffer.from(sealed[field as 'nonce'], 'base64');
        bytes[at % bytes.length]! ^= 1 << bit;
        const tampered = { ...sealed, [field]: bytes.toString('base64') };
        assert.throws(
          () => openSecrets(tampered, [key], 'openai|api_key'),
          (e: CredentialsError) => e.code === 'decryption_failed',
        );
      }),
      { numRuns: 300 },
    );
  });

  test('changed associated data (the provider the token belongs to) is rejected', () => {
    const sealed = sealSecrets({ token: 'sk' }, key, 'openai|api_key');
    assert.throws(() => openSecrets(sealed, [key], 'attacker|api_key'), /authentication failed/);
  });

  test('a wrong key says so, and names the key ids involved', () => {
    const sealed = sealSecrets({ token: 'sk' }, key, 'a');
    assert.throws(
      () => openSecrets(sealed, [other], 'a'),
      (e: CredentialsError) => e.code === 'decryption_failed' && e.message.includes(key.id) && e.message.includes('wrong key'),
    );
    assert.throws(() => openSecrets(sealed, [], 'a'), /no key is configured/);
    // A forged key id pointing at the other key still fails authentication.
    assert.throws(() => openSecrets({ ...sealed, key_id: other.id }, [other], 'a'), /authentication failed/);
  });

  test('malformed envelopes are rejected with the field at fault', () => {
    const sealed = sealSecrets({ token: 'sk' }, key, 'a');
    const cases: [unknown, RegExp][] = [
      [null, /not an object/],
      [{ ...sealed, algorithm: 'aes-128-gcm' }, /algorithm/],
      [{ ...sealed, key_id: 'zz' }, /key_id/],
      [{ ...sealed, nonce: 'not base64!' }, /nonce/],
      [{ ...sealed, nonce: Buffer.alloc(8).toString('base64') }, /nonce must be 12 bytes/],
      [{ ...sealed, tag: Buffer.alloc(4).toString('base64') }, /tag must be 16 bytes/],
      [{ ...sealed, ciphertext: 42 }, /ciphertext/],
    ];
    for (const [envelope, message] of cases) {
      assert.throws(() => openSecrets(envelope, [key], 'a'), message);
    }
  });
});
