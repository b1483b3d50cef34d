import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  AGILEPLUS_GENESIS,
  AuditLog,
  agilePlusHash,
  createNoteSigner,
  createNoteVerifier,
  formatCheckpoint,
  generateCheckpointKeys,
  MemoryAuditStore,
  parseCheckpoint,
  parseSignedNote,
  signNote,
  verifyChain,
  verifyCheckpoint,
} from '../src/index.js';

const keys = generateCheckpointKeys('log.example');
const signer = createNoteSigner('log.example', keys.privateKeyPem);
const verifier = createNoteVerifier(keys.verifierKey);

describe('signed notes and checkpoints', () => {
  test('checkpoint body round-trips and is byte-exact', () => {
    const body = formatCheckpoint({ origin: 'o', size: 3, root: '00'.repeat(32) });
    assert.equal(body, `o\n3\n${Buffer.alloc(32).toString('base64')}\n`);
    assert.deepEqual(parseCheckpoint(body), { origin: 'o', size: 3, root: '00'.repeat(32), extensions: [] });
    assert.deepEqual(parseCheckpoint(`${body}ext line\n`).extensions, ['ext line']);
  });

  test('malformed checkpoint bodies are refused', () => {
    for (const bad of [
      'o\n3\n',
      'o\n03\nAAAA\n',
      'o\n-1\nAAAA\n',
      'o\n3\nAAAA\n',
      `\n3\n${Buffer.alloc(32).toString('base64')}\n`,
      'o\n3\nroot',
    ]) {
      assert.throws(() => parseCheckpoint(bad), /checkpoint/, JSON.stringify(bad));
    }
  });

  test('a note carries one line per signer; unknown signers are ignored', async () => {
    const other = generateCheckpointKeys('witness.example');
    const body = formatCheckpoint({ origin: 'o', size: 1, root: 'ab'.repeat(32) });
    const note = await signNote(body, [signer, createNoteSigner('witness.example', other.privateKeyPem)]);
    const parsed = parseSignedNote(note);
    assert.equal(parsed.text, body);
    assert.deepEqual(
      parsed.signatures.map((s) => s.name),
      ['log.example', 'witness.example'],
    );
    const result = await verifyCheckpoint(note, { verifiers: [verifier] });
    assert.equal(result.valid, true);
    assert.deepEqual(result.signed_by, ['log.example']);
  });

  test('malformed notes are refused with BAD_CHECKPOINT', async () => {
    const body = formatCheckpoint({ origin: 'o', size: 1, root: 'ab'.repeat(32) });
    for (const bad of [
      body,
      `${body}\n`,
      `${body}\n— log.example !!!\n`,
      `${body}\n- log.example AAAAAAAA\n`,
      `o\x01\n1\nAAAA\n\n— a AAAAAAAA\n`,
    ]) {
      const result = await verifyCheckpoint(bad, { verifiers: [verifier] });
      assert.equal(result.error_code, 'BAD_CHECKPOINT', JSON.stringify(bad));
    }
  });

  test('PEM and verifier-key forms of the same key agree', async () => {
    const note = await signNote(formatCheckpoint({ origin: 'o', size: 0, root: 'cd'.repeat(32) }), [signer]);
    const pem = createNoteVerifier(keys.publicKeyPem, 'log.example');
    assert.equal(Buffer.from(pem.keyId).toString('hex'), Buffer.from(verifier.keyId).toString('hex'));
    assert.equal((await verifyCheckpoint(note, { verifiers: [pem] })).valid, true);
    assert.throws(() => createNoteVerifier(keys.publicKeyPem), /name/);
    assert.throws(() => createNoteVerifier('log.example+00000000+AQ=='), /Ed25519|key/);
    const tamperedKeyId = keys.verifierKey.replace(/\+[0-9a-f]{8}\+/, '+00000000+');
    assert.throws(() => createNoteVerifier(tamperedKeyId), /key id/);
  });

  test('standalone checkpoint checks: rollback, fork, and a consistency proof to the trusted state', async () => {
    const log = new AuditLog(new MemoryAuditStore(), { origin: 'o' });
    for (let i = 0; i < 10; i++) await log.append({ i });
    const old = await log.head();
    for (let i = 10; i < 16; i++) await log.append({ i });
    const note = await log.checkpoint(signer);
    const proof = await log.proveConsistency(old.size);
    const trusted = { origin: 'o', size: old.size, root: old.root };
    const good = await verifyCheckpoint(note, { verifiers: [verifier], trustedState: trusted, consistencyProof: proof.proof });
    assert.equal(good.valid, true, good.error_message ?? '');
    const unproven = await verifyCheckpoint(note, { verifiers: [verifier], trustedState: trusted });
    assert.equal(unproven.valid, true);
    assert.match(unproven.warnings.join(), /consistency/);
    const forged = await verifyCheckpoint(note, {
      verifiers: [verifier],
      trustedState: { ...trusted, root: 'ee'.repeat(32) },
      consistencyProof: proof.proof,
    });
    assert.equal(forged.error_code, 'FORK');
    const rollback = await verifyCheckpoint(note, { verifiers: [verifier], trustedState: { origin: 'o', size: 20, root: old.root } });
    assert.equal(rollback.error_code, 'ROLLBACK');
    const sameSize = await verifyCheckpoint(note, { verifiers: [verifier], trustedState: { origin: 'o', size: 16, root: old.root } });
    assert.equal(sameSize.error_code, 'FORK');
  });
});

describe('agileplus-v1 scheme', () => {
  function chain(n: number) {
    let prev = AGILEPLUS_GENESIS;
    return Array.from({ length: n }, (_, i) => {
      const row = {
        id: i + 10,
        feature_id: 3,
        wp_id: i % 2 ? i : null,
        timestamp: `2026-05-0${(i % 9) + 1}T12:00:00.5Z`,
        actor: 'agent',
        transition: 'PLANNED -> DOING',
        evidence_refs: [],
        prev_hash: prev,
        hash: '',
      };
      row.hash = agilePlusHash(row);
      prev = row.hash;
      return row;
    });
  }

  test('hash layout: i64 little-endian ids, optional wp_id, raw prev_hash bytes', () => {
    const le = (n: number) => {
      const b = Buffer.alloc(8);
      b.writeBigInt64LE(BigInt(n));
      return b;
    };
    const expected = createHash('sha256')
      .update(le(3))
      .update(le(5))
      .update('2026-01-01T00:00:00Z')
      .update('me')
      .update('A -> B')
      .update(Buffer.alloc(32))
      .digest('hex');
    assert.equal(
      agilePlusHash({
        feature_id: 3,
        wp_id: 5,
        timestamp: '2026-01-01T00:00:00Z',
        actor: 'me',
        transition: 'A -> B',
        prev_hash: AGILEPLUS_GENESIS,
      }),
      expected,
    );
  });

  test('a chain verifies; ids may skip but never go back; byte-array hashes are accepted', async () => {
    const rows = chain(6);
    assert.equal(
      (
        await verifyChain(
          rows.map((r) => JSON.stringify(r)),
          { scheme: 'agileplus-v1' },
        )
      ).valid,
      true,
    );
    const asBytes = rows.map((r) => ({ ...r, hash: [...Buffer.from(r.hash, 'hex')], prev_hash: [...Buffer.from(r.prev_hash, 'hex')] }));
    assert.equal((await verifyChain(asBytes, { scheme: 'agileplus-v1' })).valid, true);
  });

  test('tampering is caught at the right entry', async () => {
    const rows = chain(6).map((r) => JSON.stringify(r));
    const edited = rows.map((r, i) => (i === 3 ? r.replace('"actor":"agent"', '"actor":"mallory"') : r));
    const result = await verifyChain(edited, { scheme: 'agileplus-v1' });
    assert.equal(result.error_code, 'HASH_MISMATCH');
    assert.equal(result.first_invalid_id, 4);
    const reordered = [rows[0]!, rows[2]!, rows[1]!, ...rows.slice(3)];
    assert.equal((await verifyChain(reordered, { scheme: 'agileplus-v1' })).first_invalid_id, 2);
    const badGenesis = chain(2).map((r) => JSON.stringify({ ...r, prev_hash: 'ff'.repeat(32) }));
    assert.equal((await verifyChain(badGenesis, { scheme: 'agileplus-v1' })).error_code, 'GENESIS_MISMATCH');
  });
});

test('the /web entry point imports nothing from node', () => {
  const root = fileURLToPath(new URL('../src/', import.meta.url));
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(file, 'utf8');
    for (const [, spec] of source.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'([^']+)'/g)) {
      assert.ok(!spec!.startsWith('node:'), `${file} imports ${spec}`);
      if (spec!.startsWith('.')) visit(resolve(dirname(file), spec!.replace(/\.js$/, '.ts')));
    }
  };
  visit(join(root, 'web.ts'));
  assert.ok(seen.size > 5);
  for (const file of seen) assert.ok(!file.includes('/node/'), `${file} is node-only`);
});
