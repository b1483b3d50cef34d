import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isStreamOpening } from './streamOpening.js';

const roleChunk = 'data: {"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n';
const contentChunk = 'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n';
const messageStart = 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","content":[]}}\n\n';
const ping = 'event: ping\ndata: {"type":"ping"}\n\n';

describe('isStreamOpening: events that carry no part of the answer', () => {
  test('start events, pings and comments open a stream, as bytes or text, whatever the line ends', () => {
    for (const opening of [
      messageStart,
      ping,
      messageStart + ping,
      ': keep-alive\n\n',
      ': OPENROUTER PROCESSING\r\n\r\n',
      'event: response.created\ndata: {"type":"response.created","sequence_number":0}\n\nevent: response.in_progress\ndata: {"type":"response.in_progress","sequence_number":1}\n\n',
      ping.replaceAll('\n', '\r\n'),
    ]) {
      assert.equal(isStreamOpening(opening), true, opening);
      assert.equal(isStreamOpening(Buffer.from(opening)), true, opening);
    }
  });

  test('anything of the answer, an error, the terminator or text that is not JSON is not an opening', () => {
    for (const answer of [
      contentChunk,
      `${messageStart}event: content_block_start\ndata: {"type":"content_block_start","index":0}\n\n`,
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
      'data: {"error":{"message":"Rate limit reached","type":"rate_limit_error"}}\n\n',
      'data: [DONE]\n\n',
      'data: {"candidates":[{"content":{"parts":[{"text":""}]}}]}\n\n',
      `: keep-alive\n\n${contentChunk}`,
    ]) {
      assert.equal(isStreamOpening(Buffer.from(answer)), false, answer);
      assert.equal(isStreamOpening(answer, { roleChunks: true }), false, answer);
    }
  });

  test('an OpenAI chat role chunk opens a stream only when asked (a translated start event), never with content, a finish or usage', () => {
    assert.equal(isStreamOpening(Buffer.from(roleChunk)), false);
    assert.equal(isStreamOpening(roleChunk, { roleChunks: true }), true);
    assert.equal(isStreamOpening(roleChunk + contentChunk, { roleChunks: true }), false);
    const finished = roleChunk.replace('"finish_reason":null', '"finish_reason":"stop"');
    assert.equal(isStreamOpening(finished, { roleChunks: true }), false);
    const withUsage = roleChunk.replace('"id":"c1"', '"id":"c1","usage":{"prompt_tokens":3}');
    assert.equal(isStreamOpening(withUsage, { roleChunks: true }), false);
    const reasoning = roleChunk.replace('"content":""', '"reasoning_content":"hmm"');
    assert.equal(isStreamOpening(reasoning, { roleChunks: true }), false);
  });
});
