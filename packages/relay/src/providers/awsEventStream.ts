/**
 * @module awsEventStream
 * A decoder for AWS's binary event-stream framing
 * (`application/vnd.amazon.eventstream`), which the cloud coding-assistant
 * provider streams its answers in. Each message is: total length (uint32),
 * headers length (uint32), a CRC32 of those eight bytes, the headers, the
 * payload, and a CRC32 of everything before it. Headers are a name (uint8
 * length + bytes), a type byte and a typed value; the ones that matter
 * (`:message-type`, `:event-type`, `:exception-type`) are strings. Both
 * checksums are verified, so a corrupted or cut stream is noticed rather
 * than misread.
 */
import { crc32 } from 'node:zlib';

/** One decoded message. */
export interface EventStreamMessage {
  headers: Record<string, string | number | boolean>;
  payload: Buffer;
}

/** The stream is not valid event-stream framing. */
export class EventStreamError extends Error {
  override name = 'EventStreamError';
}

const PRELUDE = 12;
/** Messages above this are refused (AWS caps them at 16 MiB plus framing). */
const MAX_MESSAGE = 24 * 1024 * 1024;

function readHeaders(bytes: Buffer): EventStreamMessage['headers'] {
  const headers: EventStreamMessage['headers'] = {};
  let at = 0;
  while (at < bytes.length) {
    const nameLength = bytes.readUInt8(at);
    const name = bytes.toString('utf8', at + 1, at + 1 + nameLength);
    at += 1 + nameLength;
    const type = bytes.readUInt8(at++);
    switch (type) {
      case 0:
      case 1:
        headers[name] = type === 0;
        break;
      case 2:
        headers[name] = bytes.readInt8(at);
        at += 1;
        break;
      case 3:
        headers[name] = bytes.readInt16BE(at);
        at += 2;
        break;
      case 4:
        headers[name] = bytes.readInt32BE(at);
        at += 4;
        break;
      case 5:
      case 8:
        headers[name] = Number(bytes.readBigInt64BE(at));
        at += 8;
        break;
      case 6:
      case 7: {
        const length = bytes.readUInt16BE(at);
        headers[name] =
          type === 7 ? bytes.toString('utf8', at + 2, at + 2 + length) : bytes.subarray(at + 2, at + 2 + length).toString('base64');
        at += 2 + length;
        break;
      }
      case 9:
        headers[name] = bytes.subarray(at, at + 16).toString('hex');
        at += 16;
        break;
      default:
        throw new EventStreamError(`unknown header type ${type}`);
    }
  }
  return headers;
}

/**
 * Splits a byte stream into messages, whatever the chunking.
 *
 * @example
 * ```ts
 * const decoder = new EventStreamDecoder();
 * for (const message of decoder.push(chunk)) console.log(message.headers[':event-type'], message.payload.toString());
 * ```
 */
export class EventStreamDecoder {
  private buffer: Buffer = Buffer.alloc(0);

  push(chunk: Uint8Array): EventStreamMessage[] {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.buffer = this.buffer.length === 0 ? Buffer.from(bytes) : Buffer.concat([this.buffer, bytes]);
    const out: EventStreamMessage[] = [];
    while (this.buffer.length >= PRELUDE) {
      const total = this.buffer.readUInt32BE(0);
      const headersLength = this.buffer.readUInt32BE(4);
      if (crc32(this.buffer.subarray(0, 8)) !== this.buffer.readUInt32BE(8)) throw new EventStreamError('prelude checksum mismatch');
      if (total > MAX_MESSAGE || total < PRELUDE + 4 + headersLength) throw new EventStreamError(`bad message length ${total}`);
      if (this.buffer.length < total) break;
      const message = this.buffer.subarray(0, total);
      if (crc32(message.subarray(0, total - 4)) !== message.readUInt32BE(total - 4))
        throw new EventStreamError('message checksum mismatch');
      out.push({
        headers: readHeaders(message.subarray(PRELUDE, PRELUDE + headersLength)),
        payload: Buffer.from(message.subarray(PRELUDE + headersLength, total - 4)),
      });
      this.buffer = this.buffer.subarray(total);
    }
    return out;
  }

  /** Bytes of an incomplete message held back. */
  get pending(): number {
    return this.buffer.length;
  }
}
