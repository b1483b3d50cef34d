/**
 * @module topLevel
 * Finds the chain's own members (`id`, `prev_hash`, `hash`) in a canonical
 * line without parsing it: strings are skipped with `indexOf`, so the scan
 * touches little more than the structure. Used by the hash-only fast path.
 */

/** The chain members of one line, and where the `hash` member sits. */
export interface ChainMembers {
  id: number;
  prevHash: string;
  hash: string;
  /** The line without its `hash` member: the hash input. */
  hashInput: string;
}

const QUOTE = 34;
const BACKSLASH = 92;

/** Index of the quote that closes the string opened at `open`, or -1. */
function stringEnd(line: string, open: number): number {
  let close = line.indexOf('"', open + 1);
  while (close > 0) {
    let backslashes = 0;
    for (let k = close - 1; line.charCodeAt(k) === BACKSLASH; k--) backslashes++;
    if (backslashes % 2 === 0) return close;
    close = line.indexOf('"', close + 1);
  }
  return -1;
}

/** Reads a 64-character string value whose opening quote is at `at`. */
function hashValue(line: string, at: number): string | undefined {
  if (line.charCodeAt(at) !== QUOTE || line.charCodeAt(at + 65) !== QUOTE) return undefined;
  return line.slice(at + 1, at + 65);
}

/**
 * Scans a line for its top-level chain members. Returns `undefined` when the
 * line is not shaped like a canonical entry; the caller then takes the strict
 * path, which explains what is wrong.
 */
export function scanChainMembers(line: string): ChainMembers | undefined {
  if (line.charCodeAt(0) !== 123 /* { */) return undefined;
  let depth = 0;
  let expectKey = false;
  let id: number | undefined;
  let prevHash: string | undefined;
  let hash: string | undefined;
  let hashStart = -1;
  let hashEnd = -1;
  for (let i = 0; i < line.length; i++) {
    const code = line.charCodeAt(i);
    if (code === QUOTE) {
      if (depth === 1 && expectKey) {
        expectKey = false;
        if (line.startsWith('"hash":', i)) {
          hash = hashValue(line, i + 7);
          hashStart = i;
          hashEnd = i + 73;
          i = hashEnd - 1;
          continue;
        }
        if (line.startsWith('"prev_hash":', i)) {
          prevHash = hashValue(line, i + 12);
          i += 78 - 1; // `"prev_hash":` (12) + a quoted 64-character value (66)
          continue;
        }
        if (line.startsWith('"id":', i)) {
          let j = i + 5;
          let value = 0;
          while (j < line.length && line.charCodeAt(j) >= 48 && line.charCodeAt(j) <= 57) value = value * 10 + line.charCodeAt(j++) - 48;
          if (j === i + 5) return undefined;
          id = value;
          i = j - 1;
          continue;
        }
      }
      const end = stringEnd(line, i);
      if (end < 0) return undefined;
      i = end;
    } else if (code === 123 /* { */ || code === 91 /* [ */) {
      depth++;
      if (code === 123 && depth === 1) expectKey = true;
    } else if (code === 125 /* } */ || code === 93 /* ] */) {
      depth--;
    } else if (code === 44 /* , */ && depth === 1) {
      expectKey = true;
    }
  }
  if (id === undefined || prevHash === undefined || hash === undefined || depth !== 0) return undefined;
  const hashInput =
    line.charCodeAt(hashStart - 1) === 44
      ? line.slice(0, hashStart - 1) + line.slice(hashEnd)
      : line.charCodeAt(hashEnd) === 44
        ? line.slice(0, hashStart) + line.slice(hashEnd + 1)
        : line.slice(0, hashStart) + line.slice(hashEnd);
  return { id, prevHash, hash, hashInput };
}
