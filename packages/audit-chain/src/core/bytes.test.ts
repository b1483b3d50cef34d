import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { fromBase64, fromHex, isHashHex, toBase64, toHex } from './bytes.js';
import { sha256 } from './sha256.js';

describe('bytes', () => {
  test('hex round-trips and matches Buffer', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        const hex = toHex(bytes);
        assert.equal(hex, Buffer.from(bytes).toString('hex'));
        assert.deepEqual(fromHex(hex), bytes);
        assert.deepEqual(fromHex(hex.toUpperCase()), bytes);
      }),
    );
    assert.throws(() => fromHex('abc'), /odd/);
    assert.throws(() => fromHex('zz'), /invalid hex/);
  });

  test('base64 round-trips, matches Buffer, and refuses non-canonical input', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        const text = toBase64(bytes);
        assert.equal(text, Buffer.from(bytes).toString('base64'));
        assert.deepEqual(fromBase64(text), bytes);
      }),
    );
    assert.throws(() => fromBase64('QQ'), /multiple of 4/);
    assert.throws(() => fromBase64('QR=='), /non-canonical/);
    assert.throws(() => fromBase64('Q-=='), /invalid base64/);
    assert.throws(() => fromBase64('Q=Q='), /invalid base64/);
  });

  test('isHashHex accepts only 64 lower-case hex characters', () => {
    assert.ok(isHashHex('a'.repeat(64)));
    assert.equal(isHashHex('A'.repeat(64)), false);
    assert.equal(isHashHex('a'.repeat(63)), false);
    assert.equal(isHashHex(42), false);
  });
});

describe('sha256 (portable)', () => {
  test('FIPS 180-4 known answers', () => {
    const enc = new TextEncoder();
    assert.equal(toHex(sha256(new Uint8Array())), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    assert.equal(toHex(sha256(enc.encode('abc'))), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.equal(
      toHex(sha256(enc.encode('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'))),
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  test('equals node:crypto on random inputs of every padding length', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        assert.equal(toHex(sha256(bytes)), createHash('sha256').update(bytes).digest('hex'));
      }),
      { numRuns: 400 },
    );
  });
});
