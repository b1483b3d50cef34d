import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { scanJson } from './jsonScan.js';

/** What JSON.parse makes of the bytes: the `usage` member of an object document, `absent`, or `invalid`. */
function reference(bytes: Uint8Array): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return 'invalid';
  }
  const isObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  return isObject && Object.hasOwn(parsed as object, 'usage') ? { usage: (parsed as { usage: unknown }).usage } : 'absent';
}

function scanned(bytes: Uint8Array): unknown {
  const range = scanJson(bytes, 'usage');
  if (range === undefined) return 'invalid';
  if (range === null) return 'absent';
  return { usage: JSON.parse(Buffer.from(bytes.subarray(range.start, range.end)).toString('utf8')) };
}

const agree = (text: string | Uint8Array) => {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  assert.deepEqual(scanned(bytes), reference(bytes), `for ${JSON.stringify(Buffer.from(bytes).toString('latin1'))}`);
};

describe('scanJson', () => {
  it('finds the last top-level usage and ignores nested ones', () => {
    agree('{"id":"x","usage":{"prompt_tokens":12,"completion_tokens":10}}');
    agree('{"usage":1,"choices":[{"usage":2}],"usage" : {"prompt_tokens":3}}');
    agree('{"a":{"usage":5}}');
    agree(' {"us\\u0061ge":[1,2]} ');
    agree('[{"usage":1}]');
    assert.deepEqual(scanned(Buffer.from('{"usage":{"prompt_tokens":7}}')), { usage: { prompt_tokens: 7 } });
  });

  it('rejects what JSON.parse rejects', () => {
    for (const text of [
      '',
      ' ',
      '{',
      '{"usage":1,}',
      '[1,]',
      '{"a" 1}',
      '{"a":01}',
      '{"a":1.}',
      '{"a":-}',
      '{"a":1e}',
      '{"a":tru}',
      '{"a":"\\x"}',
      '{"a":"\\u12"}',
      '{"a":"tab\there"}',
      '{} {}',
      '\ufeff{}',
      '{"a":1}}',
      "{'a':1}",
      '{"a":NaN}',
      '['.repeat(100_000),
    ])
      agree(text);
  });

  it('accepts what JSON.parse accepts, deep nesting included', () => {
    agree(`${'['.repeat(50_000)}${']'.repeat(50_000)}`);
    agree('{"a":"caf\u00e9 \\"q\\" \\/ \\b\\f\\n\\r\\t \\uD83D\\uDE00","usage":-0.5e+3}');
    agree(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe2, 0x22, 0x7d])); // an invalid UTF-8 byte inside a string
    agree(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0xe2, 0x7d]));
  });

  it('agrees with JSON.parse on any JSON document and any corruption of one', () => {
    const doc = fc.oneof(
      fc.json(),
      fc.record({ usage: fc.jsonValue(), other: fc.jsonValue() }).map((v) => JSON.stringify(v, null, 1)),
    );
    fc.assert(
      fc.property(doc, (text) => agree(text)),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(doc, fc.nat(), fc.integer({ min: 0, max: 255 }), (text, at, byte) => {
        const bytes = Buffer.from(text, 'utf8');
        if (bytes.length === 0) return;
        bytes[at % bytes.length] = byte;
        agree(bytes);
      }),
      { numRuns: 4000 },
    );
    fc.assert(
      fc.property(doc, fc.nat(), (text, cut) => agree(Buffer.from(text, 'utf8').subarray(0, cut % (text.length + 1)))),
      { numRuns: 1000 },
    );
  });
});
