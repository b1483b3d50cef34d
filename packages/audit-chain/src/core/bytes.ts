/**
 * @module bytes
 * Hex, base64 and UTF-8 helpers that work the same in Node and in browsers,
 * so that the verifier core never needs `Buffer`.
 */
import { AuditChainError } from './errors.js';

const HEX_DIGITS = '0123456789abcdef';
const HEX_PAIRS: string[] = Array.from({ length: 256 }, (_, byte) => HEX_DIGITS[byte >> 4]! + HEX_DIGITS[byte & 15]!);

/** Lower-case hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += HEX_PAIRS[bytes[i]!];
  return out;
}

const HASH_PATTERN = /^[0-9a-f]{64}$/;

/** True when `value` is 64 lower-case hex characters: the form of every hash in the format. */
export function isHashHex(value: unknown): value is string {
  return typeof value === 'string' && HASH_PATTERN.test(value);
}

const NIBBLE = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) NIBBLE[48 + i] = i;
for (let i = 0; i < 6; i++) {
  NIBBLE[97 + i] = 10 + i;
  NIBBLE[65 + i] = 10 + i;
}

function hexNibble(code: number): number {
  return code < 256 ? NIBBLE[code]! : -1;
}

/** Decodes hex (either case) into bytes; throws on odd length or a non-hex digit. */
export function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 !== 0) throw new AuditChainError('INVALID_ARGUMENT', 'hex string has an odd length');
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) {
    const hi = hexNibble(hex.charCodeAt(2 * i));
    const lo = hexNibble(hex.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) throw new AuditChainError('INVALID_ARGUMENT', `invalid hex digit near offset ${2 * i}`);
    out[i] = (hi << 4) | lo;
  }
  return out;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_INDEX = new Int16Array(128).fill(-1);
for (let i = 0; i < B64.length; i++) B64_INDEX[B64.charCodeAt(i)] = i;

/** Standard, padded base64 (RFC 4648 §4), as used by signed notes. */
export function toBase64(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += B64[n >> 18]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + B64[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += `${B64[n >> 18]!}${B64[(n >> 12) & 63]!}==`;
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += `${B64[n >> 18]!}${B64[(n >> 12) & 63]!}${B64[(n >> 6) & 63]!}=`;
  }
  return out;
}

/**
 * Decodes strict, padded base64. Anything else (whitespace, URL alphabet,
 * missing padding, non-zero trailing bits) is refused, because a signed note
 * has exactly one valid encoding.
 */
export function fromBase64(text: string): Uint8Array {
  if (text.length % 4 !== 0) throw new AuditChainError('INVALID_ARGUMENT', 'base64 length is not a multiple of 4');
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - padding);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    let n = 0;
    for (let j = 0; j < 4; j++) {
      const code = text.charCodeAt(i + j);
      const isPad = code === 61 && i + 4 === text.length && j >= 4 - padding;
      const value = isPad ? 0 : code < 128 ? B64_INDEX[code]! : -1;
      if (value < 0) throw new AuditChainError('INVALID_ARGUMENT', `invalid base64 character at offset ${i + j}`);
      n = (n << 6) | value;
    }
    if (o < out.length) out[o++] = (n >> 16) & 255;
    if (o < out.length) out[o++] = (n >> 8) & 255;
    if (o < out.length) out[o++] = n & 255;
  }
  if (toBase64(out) !== text) throw new AuditChainError('INVALID_ARGUMENT', 'non-canonical base64');
  return out;
}

const encoder = new TextEncoder();

/** UTF-8 bytes of `text`. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Byte-wise equality. Not constant time: only for public values such as hashes. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Concatenates byte arrays. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
