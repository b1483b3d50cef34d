import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import * as node from '../src/index.js';
import * as web from '../src/web.js';

const vectors = JSON.parse(readFileSync(new URL('../test-vectors.json', import.meta.url), 'utf8'));

for (const [name, api] of [
  ['node', node],
  ['web', web],
] as const) {
  describe(`test-vectors.json (${name} entry point)`, () => {
    test('canonicalization', () => {
      for (const v of vectors.canonicalization) assert.equal(api.canonicalize(JSON.parse(v.input)), v.canonical);
    });

    test('genesis hashes', () => {
      for (const v of vectors.genesis) assert.equal(api.genesisHash(v.origin), v.prev_hash);
    });

    test('entries: stored lines are canonical and their hashes verify', async () => {
      for (const e of vectors.entries) assert.equal(api.canonicalize(JSON.parse(e.line)), e.line);
      const result = await api.verifyChain(
        vectors.entries.map((e: { line: string }) => e.line),
        { origin: vectors.origin },
      );
      assert.equal(result.valid, true, result.error_message ?? '');
      assert.equal(result.root, vectors.merkle.roots_by_size.at(-1));
    });

    test('Merkle roots, inclusion and consistency proofs', () => {
      const hashes = vectors.entries.map((e: { hash: string }) => e.hash);
      vectors.merkle.roots_by_size.forEach((root: string, size: number) => {
        assert.equal(api.merkleRoot(hashes.slice(0, size)), root);
      });
      for (const proof of vectors.merkle.inclusion) assert.ok(api.verifyInclusion(proof));
      for (const proof of vectors.merkle.consistency) assert.ok(api.verifyConsistency(proof));
    });

    test('the signed checkpoint verifies with the verifier key', async () => {
      const verifier =
        name === 'node'
          ? node.createNoteVerifier(vectors.checkpoint.verifier_key)
          : web.noteVerifierFromKey(vectors.checkpoint.verifier_key);
      const result = await api.verifyCheckpoint(vectors.checkpoint.note, { verifiers: [verifier] });
      assert.equal(result.valid, true, result.error_message ?? '');
      assert.equal(result.checkpoint?.size, vectors.entries.length);
    });

    test('AgilePlus rows verify under agileplus-v1', async () => {
      const rows = vectors.agileplus.map((row: object) => JSON.stringify(row));
      const result = await api.verifyChain(rows, { scheme: 'agileplus-v1' });
      assert.equal(result.valid, true, result.error_message ?? '');
    });

    test('tamper cases report the listed code and entry', async () => {
      for (const c of vectors.tamper) {
        const result = await api.verifyChain(c.lines, { origin: vectors.origin });
        assert.equal(result.valid, c.valid, c.name);
        assert.equal(result.error_code, c.error_code, c.name);
        assert.equal(result.first_invalid_id, c.first_invalid_id, c.name);
      }
    });
  });
}

test('the checkpoint key is RFC 8032 test 1, so the Ed25519 layer is pinned independently', () => {
  assert.equal(vectors.checkpoint.private_key_seed, '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60');
  assert.equal(vectors.checkpoint.public_key, 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
});
