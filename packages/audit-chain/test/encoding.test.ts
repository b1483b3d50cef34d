import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import fc from 'fast-check';
import { splitLineBatches } from '../src/core/jsonlLines.js';
import { AuditLog, MemoryAuditStore, verifyFile, verifyJsonl } from '../src/index.js';
import { verifyJsonl as verifyJsonlWeb } from '../src/web.js';
import { chunked, ORIGIN, toFileBytes } from './helpers.js';

const dir = await mkdtemp(join(tmpdir(), 'audit-encoding-'));
after(() => rm(dir, { recursive: true, force: true }));

/** A valid log whose entry 3 holds U+FFFD, the character a lenient decoder puts in place of bytes that are not UTF-8. */
async function logWithReplacementCharacter(): Promise<Buffer> {
  const store = new MemoryAuditStore();
  const log = new AuditLog(store, { origin: ORIGIN });
  for (const note of ['one', 'two', 'th\uFFFDree', 'four']) await log.append({ actor: 'alice', note });
  const lines: string[] = [];
  for await (const line of store.lines()) lines.push(line);
  return toFileBytes(lines);
}

function replaceBytes(bytes: Buffer, from: Buffer, to: Buffer): Buffer {
  const at = bytes.indexOf(from);
  assert.ok(at >= 0);
  return Buffer.concat([bytes.subarray(0, at), to, bytes.subarray(at + from.length)]);
}

const verifiers = {
  'verifyJsonl (node)': (bytes: Uint8Array, mode: 'strict' | 'hash-only') => verifyJsonl(chunked(bytes), { origin: ORIGIN, mode }),
  'verifyJsonl (web)': (bytes: Uint8Array, mode: 'strict' | 'hash-only') => verifyJsonlWeb(chunked(bytes), { origin: ORIGIN, mode }),
  verifyFile: async (bytes: Uint8Array, mode: 'strict' | 'hash-only') => {
    const path = join(dir, `log-${Math.random().toString(36).slice(2)}.jsonl`);
    await writeFile(path, bytes);
    return verifyFile(path, { origin: ORIGIN, mode });
  },
};

describe('the stored form is UTF-8 without a BOM (SPEC.md section 3)', () => {
  for (const [name, verify] of Object.entries(verifiers)) {
    for (const mode of ['strict', 'hash-only'] as const) {
      test(`${name}, ${mode}: bytes that are not UTF-8 are refused, even where a lenient decoder would read the stored text`, async () => {
        const intact = await logWithReplacementCharacter();
        assert.equal((await verify(intact, mode)).valid, true);
        // 0xFF is never UTF-8; a lenient decoder reads it as U+FFFD, the very character entry 3 was sealed with.
        const altered = replaceBytes(intact, Buffer.from('\uFFFD', 'utf8'), Buffer.from([0xff]));
        const result = await verify(altered, mode);
        assert.equal(result.valid, false, 'a log whose bytes were altered verified');
        assert.equal(result.error_code, 'PARSE_ERROR');
        assert.equal(result.first_invalid_id, 3);
        assert.equal(result.entries_verified, 2);
        assert.match(result.error_message!, /not UTF-8/);
      });

      test(`${name}, ${mode}: a byte-order mark before entry 1 is refused`, async () => {
        const intact = await logWithReplacementCharacter();
        const result = await verify(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), intact]), mode);
        assert.equal(result.valid, false, 'a log with a BOM verified');
        assert.equal(result.error_code, 'PARSE_ERROR');
        assert.equal(result.first_invalid_id, 1);
      });
    }
  }

  test('the web verifier reports a torn tail like the Node one', async () => {
    const torn = Buffer.concat([await logWithReplacementCharacter(), Buffer.from('{"actor":"al')]);
    const node = await verifyJsonl(chunked(torn), { origin: ORIGIN });
    const web = await verifyJsonlWeb(chunked(torn), { origin: ORIGIN });
    assert.equal(node.error_code, 'TORN_TAIL');
    assert.deepEqual(web, node);
  });
});

describe('splitting bytes into lines', () => {
  test('any chunking, through one reused buffer (as fileChunks reads), gives back the lines and the torn tail', async () => {
    const line = fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => s.replaceAll('\n', ' '));
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 8 }),
        fc.option(
          line.filter((s) => s.length > 0),
          { nil: undefined },
        ),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 20 }),
        async (lines, tail, sizes) => {
          const bytes = Buffer.from(lines.map((l) => `${l}\n`).join('') + (tail ?? ''), 'utf8');
          const reused = Buffer.alloc(16);
          async function* chunks(): AsyncGenerator<Uint8Array> {
            for (let at = 0, i = 0; at < bytes.length; i++) {
              const size = sizes[i % sizes.length]!;
              const piece = bytes.subarray(at, at + size);
              reused.fill(0x78);
              piece.copy(reused);
              yield reused.subarray(0, piece.length);
              at += size;
            }
          }
          const got: string[] = [];
          let torn: string | undefined;
          for await (const batch of splitLineBatches(chunks())) {
            assert.notEqual(batch.kind, 'undecodable');
            if (batch.kind === 'lines') got.push(...batch.lines);
            if (batch.kind === 'torn') torn = batch.text;
          }
          assert.deepEqual(got, lines);
          assert.equal(torn, tail);
        },
      ),
      { numRuns: 300 },
    );
  });
});
