import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  AuditLog,
  canonicalize,
  createNoteSigner,
  createNoteVerifier,
  generateCheckpointKeys,
  MemoryAuditStore,
  MemoryCheckpointStore,
  verifyChain,
  verifyJsonl,
} from '../src/index.js';
import { buildLines, chunked, lineOfByte, ORIGIN, toFileBytes } from './helpers.js';

const COUNT = 40;
const lines = await buildLines(COUNT);
const file = toFileBytes(lines);

describe('tamper suite: every edit is caught at the right entry', () => {
  test('the untouched log verifies', async () => {
    const result = await verifyJsonl(chunked(file), { origin: ORIGIN });
    assert.equal(result.valid, true, result.error_message ?? '');
    assert.equal(result.entries_verified, COUNT);
  });

  for (const mode of ['strict', 'hash-only'] as const) {
    test(`flipping any bit of any byte is detected at that byte's line (${mode})`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.nat({ max: file.length - 1 }), fc.nat({ max: 7 }), async (offset, bit) => {
          const copy = Buffer.from(file);
          copy[offset]! ^= 1 << bit;
          const result = await verifyJsonl(chunked(copy), { origin: ORIGIN, mode });
          assert.equal(result.valid, false, `flip at ${offset} bit ${bit} went unnoticed`);
          assert.equal(
            result.first_invalid_id,
            lineOfByte(file, offset),
            `flip at ${offset}: ${result.error_code} ${result.error_message}`,
          );
        }),
        { numRuns: mode === 'strict' ? 600 : 300 },
      );
    });
  }

  test('changing a field value (same length, still valid JSON) gives HASH_MISMATCH at that entry', async () => {
    const copy = lines.slice();
    copy[15] = copy[15]!.replace('"alice"', '"alicf"');
    assert.notEqual(copy[15], lines[15]);
    const result = await verifyChain(copy, { origin: ORIGIN });
    assert.equal(result.error_code, 'HASH_MISMATCH');
    assert.equal(result.first_invalid_id, 16);
  });

  test('deleting a line: ID_SEQUENCE at the gap', async () => {
    for (const k of [0, 7, COUNT - 1]) {
      const copy = lines.filter((_, i) => i !== k);
      const result = await verifyChain(copy, { origin: ORIGIN });
      if (k === COUNT - 1) {
        // The tail is gone without a trace in the chain: only a checkpoint can show it (see below).
        assert.equal(result.valid, true);
        continue;
      }
      assert.equal(result.error_code, 'ID_SEQUENCE');
      assert.equal(result.first_invalid_id, k + 1);
    }
  });

  test('duplicating a line: ID_SEQUENCE at the copy', async () => {
    const copy = [...lines.slice(0, 11), lines[10]!, ...lines.slice(11)];
    const result = await verifyChain(copy, { origin: ORIGIN });
    assert.equal(result.error_code, 'ID_SEQUENCE');
    assert.equal(result.first_invalid_id, 12);
  });

  test('swapping two lines: caught at the first', async () => {
    const copy = lines.slice();
    [copy[5], copy[6]] = [copy[6]!, copy[5]!];
    const result = await verifyChain(copy, { origin: ORIGIN });
    assert.equal(result.error_code, 'ID_SEQUENCE');
    assert.equal(result.first_invalid_id, 6);
  });

  test('property: any reordering is caught at the first moved line', async () => {
    await fc.assert(
      fc.asyncProperty(fc.shuffledSubarray([...lines.keys()], { minLength: COUNT, maxLength: COUNT }), async (order) => {
        const firstMoved = order.findIndex((value, index) => value !== index);
        fc.pre(firstMoved >= 0);
        const result = await verifyChain(
          order.map((i) => lines[i]!),
          { origin: ORIGIN },
        );
        assert.equal(result.valid, false);
        assert.equal(result.first_invalid_id, firstMoved + 1);
      }),
      { numRuns: 100 },
    );
  });

  test('renumbering ids after a deletion still fails (the hash covers the id)', async () => {
    const copy = lines
      .filter((_, i) => i !== 3)
      .map((line, i) => {
        const entry = JSON.parse(line);
        entry.id = i + 1;
        return canonicalize(entry);
      });
    const result = await verifyChain(copy, { origin: ORIGIN });
    assert.equal(result.valid, false);
    assert.equal(result.first_invalid_id, 4);
  });

  test('re-spacing a line: NOT_CANONICAL', async () => {
    const copy = lines.slice();
    copy[9] = JSON.stringify(JSON.parse(copy[9]!), null, 1).replace(/\n/g, ' ');
    const result = await verifyChain(copy, { origin: ORIGIN });
    assert.equal(result.error_code, 'NOT_CANONICAL');
    assert.equal(result.first_invalid_id, 10);
  });

  test('reordering the keys of a line: NOT_CANONICAL', async () => {
    const copy = lines.slice();
    const entry = JSON.parse(copy[20]!);
    copy[20] = JSON.stringify(Object.fromEntries(Object.entries(entry).reverse()));
    const result = await verifyChain(copy, { origin: ORIGIN });
    assert.equal(result.error_code, 'NOT_CANONICAL');
    assert.equal(result.first_invalid_id, 21);
  });

  test('a duplicate key: DUPLICATE_KEY naming the key', async () => {
    const copy = lines.slice();
    copy[2] = copy[2]!.replace('{"actor":', '{"actor":"mallory","actor":');
    const result = await verifyChain(copy, { origin: ORIGIN });
    assert.equal(result.error_code, 'DUPLICATE_KEY');
    assert.equal(result.first_invalid_id, 3);
    assert.match(result.error_message ?? '', /"actor"/);
  });

  test('an entry moved to another log fails the genesis check', async () => {
    const result = await verifyChain(lines, { origin: 'workflow:other-repo/001-login' });
    assert.equal(result.error_code, 'GENESIS_MISMATCH');
    assert.equal(result.first_invalid_id, 1);
  });

  test('without an origin the genesis binding is reported as unchecked', async () => {
    const result = await verifyChain(lines);
    assert.equal(result.valid, true);
    assert.match(result.warnings.join(), /origin/);
  });

  test('a torn last line: TORN_TAIL at the entry being written', async () => {
    const torn = Buffer.concat([file, Buffer.from('{"actor":"al')]);
    const result = await verifyJsonl(chunked(torn), { origin: ORIGIN });
    assert.equal(result.error_code, 'TORN_TAIL');
    assert.equal(result.first_invalid_id, COUNT + 1);
    assert.equal(result.entries_verified, COUNT);
  });

  test('CRLF line endings: NOT_CANONICAL at line 1, and the message names the carriage return', async () => {
    const crlf = Buffer.from(lines.map((l) => `${l}\r\n`).join(''), 'utf8');
    const result = await verifyJsonl(chunked(crlf), { origin: ORIGIN });
    assert.equal(result.error_code, 'NOT_CANONICAL');
    assert.equal(result.first_invalid_id, 1);
    assert.match(result.error_message!, /carriage return/);
  });

  test('an empty line in the middle: PARSE_ERROR', async () => {
    const copy = [...lines.slice(0, 4), '', ...lines.slice(4)];
    const result = await verifyChain(copy, { origin: ORIGIN });
    assert.equal(result.error_code, 'PARSE_ERROR');
    assert.equal(result.first_invalid_id, 5);
  });
});

describe('tamper suite: anchors catch what the chain alone cannot', async () => {
  const keys = generateCheckpointKeys('audit.example');
  const signer = createNoteSigner('audit.example', keys.privateKeyPem);
  const verifiers = [createNoteVerifier(keys.verifierKey)];
  const store = new MemoryAuditStore();
  const checkpoints = new MemoryCheckpointStore();
  const log = new AuditLog(store, { origin: ORIGIN, checkpoints });
  for (let i = 0; i < 30; i++) await log.append({ actor: 'alice', step: i });
  const oldNote = await log.checkpoint(signer);
  const oldHead = await log.head();
  for (let i = 30; i < 50; i++) await log.append({ actor: 'alice', step: i });
  const note = await log.checkpoint(signer);
  const head = await log.head();
  const all: string[] = [];
  for await (const line of store.lines()) all.push(line);

  test('the log verifies against its latest checkpoint', async () => {
    const result = await verifyChain(all, { checkpoint: note, verifiers });
    assert.equal(result.valid, true, result.error_message ?? '');
    assert.equal(result.origin, ORIGIN, 'origin is taken from the checkpoint');
  });

  test('cutting the tail a checkpoint covers: TRUNCATED', async () => {
    const result = await verifyChain(all.slice(0, 45), { checkpoint: note, verifiers });
    assert.equal(result.error_code, 'TRUNCATED');
    assert.equal(result.first_invalid_id, 46);
  });

  test('rewriting and re-sealing history: ROOT_MISMATCH', async () => {
    const forgedStore = new MemoryAuditStore();
    const forged = new AuditLog(forgedStore, { origin: ORIGIN });
    for (let i = 0; i < 50; i++) await forged.append({ actor: i === 12 ? 'mallory' : 'alice', step: i });
    const forgedLines: string[] = [];
    for await (const line of forgedStore.lines()) forgedLines.push(line);
    const result = await verifyChain(forgedLines, { checkpoint: note, verifiers });
    assert.equal(result.error_code, 'ROOT_MISMATCH');
  });

  test('a replayed older checkpoint: ROLLBACK', async () => {
    const trustedState = { origin: ORIGIN, size: head.size, root: head.root };
    const result = await verifyChain(all.slice(0, 30), { checkpoint: oldNote, verifiers, trustedState });
    assert.equal(result.error_code, 'ROLLBACK');
  });

  test('the old checkpoint is fine for a verifier that has not seen more', async () => {
    const trustedState = { origin: ORIGIN, size: oldHead.size, root: oldHead.root };
    const result = await verifyChain(all, { checkpoint: note, verifiers, trustedState });
    assert.equal(result.valid, true, result.error_message ?? '');
  });

  test('a log that no longer extends the trusted state: FORK', async () => {
    const trustedState = { origin: ORIGIN, size: 30, root: 'ab'.repeat(32) };
    const result = await verifyChain(all, { trustedState });
    assert.equal(result.error_code, 'FORK');
  });

  test('a log shorter than the trusted state: TRUNCATED', async () => {
    const trustedState = { origin: ORIGIN, size: head.size, root: head.root };
    const result = await verifyChain(all.slice(0, 20), { trustedState });
    assert.equal(result.error_code, 'TRUNCATED');
    assert.equal(result.first_invalid_id, 21);
  });

  test('a checkpoint signed by an unknown key, or altered: BAD_SIGNATURE', async () => {
    const other = generateCheckpointKeys('audit.example');
    const foreign = await log.checkpoint(createNoteSigner('audit.example', other.privateKeyPem));
    const unknown = await verifyChain(all, { checkpoint: foreign, verifiers });
    assert.equal(unknown.error_code, 'BAD_SIGNATURE');
    const altered = note.replace(`\n${head.size}\n`, `\n${head.size - 1}\n`);
    const result = await verifyChain(all, { checkpoint: altered, verifiers });
    assert.equal(result.error_code, 'BAD_SIGNATURE');
  });

  test('a checkpoint for another log: ORIGIN_MISMATCH', async () => {
    const other = new AuditLog(new MemoryAuditStore(), { origin: 'workflow:other/1' });
    await other.append({ actor: 'alice' });
    const foreign = await other.checkpoint(signer);
    const result = await verifyChain(all, { checkpoint: foreign, verifiers, origin: ORIGIN });
    assert.equal(result.error_code, 'ORIGIN_MISMATCH');
  });

  test('a chain failure is reported before an anchor failure', async () => {
    const result = await verifyChain(all, { checkpoint: note, verifiers, origin: 'workflow:other/1' });
    assert.equal(result.error_code, 'GENESIS_MISMATCH');
  });

  test('a malformed checkpoint: BAD_CHECKPOINT', async () => {
    const result = await verifyChain(all, { checkpoint: 'not a note', verifiers });
    assert.equal(result.error_code, 'BAD_CHECKPOINT');
  });
});
