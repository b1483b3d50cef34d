/**
 * @module jsonScan
 * Checks that bytes are one JSON document (RFC 8259, exactly what
 * `JSON.parse` of their UTF-8 decoding accepts) without building it, and
 * finds one top-level member on the way. The relay reads a non-streaming
 * answer's usage this way: parsing the whole answer built an object tree per
 * request only to read one small member of it.
 *
 * Iterative (an explicit stack), so deeply nested input cannot overflow the
 * call stack. Bytes of 0x80 and above are accepted inside strings only, as
 * `JSON.parse` accepts whatever the UTF-8 decoder makes of them there (an
 * invalid sequence becomes U+FFFD; it never swallows an ASCII byte).
 */

/** Where a member's value lies in the scanned bytes: `bytes.subarray(start, end)`. */
export interface MemberRange {
  start: number;
  end: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

const isWhitespace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
const isDigit = (b: number) => b >= 0x30 && b <= 0x39;
const isHex = (b: number) => isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);

/** Escapes allowed after a backslash: `"` `\` `/` b f n r t (u is handled apart). */
const SIMPLE_ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);

const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

/** The end of the string that opens at `at` (just past its closing quote), or -1 when it is malformed. */
function stringEnd(bytes: Uint8Array, at: number): number {
  let i = at + 1;
  const n = bytes.length;
  while (i < n) {
    const b = bytes[i]!;
    if (b === QUOTE) return i + 1;
    if (b < 0x20) return -1;
    if (b === BACKSLASH) {
      const e = bytes[i + 1];
      if (e === 0x75) {
        if (i + 5 >= n) return -1;
        for (let k = i + 2; k < i + 6; k++) if (!isHex(bytes[k]!)) return -1;
        i += 6;
      } else if (e !== undefined && SIMPLE_ESCAPES.has(e)) i += 2;
      else return -1;
    } else i++;
  }
  return -1;
}

/** The end of the number that starts at `at`, or -1 when it is malformed. */
function numberEnd(bytes: Uint8Array, at: number): number {
  let i = at;
  if (bytes[i] === 0x2d) i++;
  if (bytes[i] === 0x30) i++;
  else if (isDigit(bytes[i] ?? 0) && bytes[i] !== 0x30) while (isDigit(bytes[i] ?? 0)) i++;
  else return -1;
  if (bytes[i] === 0x2e) {
    i++;
    if (!isDigit(bytes[i] ?? 0)) return -1;
    while (isDigit(bytes[i] ?? 0)) i++;
  }
  if (bytes[i] === 0x65 || bytes[i] === 0x45) {
    i++;
    if (bytes[i] === 0x2b || bytes[i] === 0x2d) i++;
    if (!isDigit(bytes[i] ?? 0)) return -1;
    while (isDigit(bytes[i] ?? 0)) i++;
  }
  return i;
}

function literalEnd(bytes: Uint8Array, at: number, literal: readonly number[]): number {
  for (let k = 0; k < literal.length; k++) if (bytes[at + k] !== literal[k]) return -1;
  return at + literal.length;
}

/** Whether the key `bytes[start, end)` (quotes included) names `member`. */
function keyIs(bytes: Uint8Array, start: number, end: number, member: string): boolean {
  const length = end - start - 2;
  let escaped = false;
  for (let i = start + 1; i < end - 1; i++) if (bytes[i] === BACKSLASH) escaped = true;
  // An escaped key ("us\u0061ge") is rare: decode it as JSON.parse would.
  if (escaped) return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('utf8')) === member;
  if (length !== member.length) return false;
  for (let k = 0; k < length; k++) if (bytes[start + 1 + k] !== member.charCodeAt(k)) return false;
  return true;
}

/**
 * Scans `bytes` as one JSON document.
 *
 * @param member - the name of a top-level member to find (when the document is an object); ASCII
 * @returns `undefined` when `JSON.parse(bytes.toString('utf8'))` would throw; otherwise the range of
 *   the value of the last top-level member named `member` (the one `JSON.parse` keeps), or `null`
 */
export function scanJson(bytes: Uint8Array, member: string): MemberRange | null | undefined {
  const n = bytes.length;
  // Open containers, innermost last: OPEN_OBJECT or OPEN_ARRAY.
  const stack: number[] = [];
  let found: MemberRange | null = null;
  // Start of the value of a top-level member named `member`, while it is being scanned.
  let pendingStart = -1;
  let i = 0;
  // Scanning a value at `i` (after whitespace) then what follows it, until the document ends.
  for (;;) {
    while (i < n && isWhitespace(bytes[i]!)) i++;
    if (i >= n) return undefined;
    const b = bytes[i]!;
    let valueEnded = true;
    if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
      stack.push(b);
      i++;
      while (i < n && isWhitespace(bytes[i]!)) i++;
      const close = b === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
      if (bytes[i] === close) {
        stack.pop();
        i++;
      } else if (b === OPEN_OBJECT) {
        const next = memberStart(i);
        if (next < 0) return undefined;
        i = next;
        valueEnded = false;
      } else valueEnded = false;
    } else {
      let end: number;
      if (b === QUOTE) end = stringEnd(bytes, i);
      else if (b === 0x74) end = literalEnd(bytes, i, TRUE);
      else if (b === 0x66) end = literalEnd(bytes, i, FALSE);
      else if (b === 0x6e) end = literalEnd(bytes, i, NULL);
      else if (b === 0x2d || isDigit(b)) end = numberEnd(bytes, i);
      else return undefined;
      if (end < 0) return undefined;
      i = end;
    }
    if (!valueEnded) continue;
    // After a complete value: close containers and move to the next value.
    for (;;) {
      if (stack.length === 1 && pendingStart >= 0) {
        found = { start: pendingStart, end: i };
        pendingStart = -1;
      }
      while (i < n && isWhitespace(bytes[i]!)) i++;
      if (stack.length === 0) return i === n ? found : undefined;
      const top = stack[stack.length - 1]!;
      const c = bytes[i];
      if (c === COMMA) {
        i++;
        if (top === OPEN_OBJECT) {
          while (i < n && isWhitespace(bytes[i]!)) i++;
          const next = memberStart(i);
          if (next < 0) return undefined;
          i = next;
        }
        break;
      }
      if (c === (top === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        stack.pop();
        i++;
        continue;
      }
      return undefined;
    }
  }

  /** Reads `"key" :` at `at`; returns where its value starts (before whitespace), or -1. */
  function memberStart(at: number): number {
    if (bytes[at] !== QUOTE) return -1;
    const keyEnd = stringEnd(bytes, at);
    if (keyEnd < 0) return -1;
    let j = keyEnd;
    while (j < n && isWhitespace(bytes[j]!)) j++;
    if (bytes[j] !== COLON) return -1;
    j++;
    if (stack.length === 1 && keyIs(bytes, at, keyEnd, member)) {
      while (j < n && isWhitespace(bytes[j]!)) j++;
      pendingStart = j;
    }
    return j;
  }
}
