/**
 * @module canonicalize
 * RFC 8785 JSON Canonicalization Scheme (JCS). ECMAScript already serializes
 * numbers and escapes strings exactly as JCS requires, so the only work left
 * is sorting keys by UTF-16 code units and refusing what I-JSON forbids
 * (non-finite numbers, lone surrogates).
 */
import { AuditChainError } from './errors.js';

/** A JSON value as JCS understands it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

// Characters that JSON must escape, plus surrogates (which need a closer look).
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what JSON escapes
const NEEDS_CARE = /["\\\u0000-\u001f\ud800-\udfff]/;

function hasLoneSurrogate(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return true;
    }
    if (code >= 0xdc00 && code <= 0xdfff) return true;
  }
  return false;
}

function serializeString(text: string): string {
  // Most strings need no escaping: skip JSON.stringify's call for them.
  if (!NEEDS_CARE.test(text)) return `"${text}"`;
  if (hasLoneSurrogate(text)) {
    throw new AuditChainError('INVALID_JSON_VALUE', 'string contains a lone surrogate, which I-JSON forbids');
  }
  return JSON.stringify(text);
}

// Keys repeat from entry to entry; remembering their serialized form saves most of the string work.
const keyCache = new Map<string, string>();
const KEY_CACHE_LIMIT = 4096;

function serializeKey(key: string): string {
  let serialized = keyCache.get(key);
  if (serialized === undefined) {
    serialized = serializeString(key);
    if (keyCache.size >= KEY_CACHE_LIMIT) keyCache.clear();
    keyCache.set(key, serialized);
  }
  return serialized;
}

function serializeNumber(value: number): string {
  if (!Number.isFinite(value)) {
    throw new AuditChainError('INVALID_JSON_VALUE', `${value} is not a finite number and has no JSON form`);
  }
  // Number#toString is the ECMAScript algorithm that RFC 8785 §3.2.2.3 adopts; -0 becomes "0".
  return Object.is(value, -0) ? '0' : String(value);
}

function serialize(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return serializeString(value);
    case 'number':
      return serializeNumber(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) return serializeArray(value);
      return serializeObject(value as Record<string, unknown>, undefined).full;
    }
    default:
      throw new AuditChainError('INVALID_JSON_VALUE', `a value of type ${typeof value} has no JSON form`);
  }
}

function serializeArray(items: readonly unknown[]): string {
  let out = '[';
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out += ',';
    const item = items[i];
    if (item === undefined) throw new AuditChainError('INVALID_JSON_VALUE', `array element ${i} is undefined`);
    out += serialize(item);
  }
  return `${out}]`;
}

interface ObjectSerialization {
  /** JCS of the whole object. */
  full: string;
  /** JCS of the object without the omitted key (equal to `full` when none was given or present). */
  without: string;
}

/**
 * Serializes an object without `omitKey`, and reports where that key's
 * member sits in the full form, so the full form costs one concatenation.
 */
function serializeMembers(
  object: Record<string, unknown>,
  omitKey: string | undefined,
): { without: string; omitted: string | undefined; at: number } {
  const proto = Object.getPrototypeOf(object);
  if (proto !== Object.prototype && proto !== null) {
    throw new AuditChainError('INVALID_JSON_VALUE', 'only plain objects have a canonical JSON form');
  }
  // Default sort compares UTF-16 code units, which is what RFC 8785 §3.2.3 specifies.
  const keys = Object.keys(object).sort();
  let out = '{';
  let omitted: string | undefined;
  let at = -1;
  for (const key of keys) {
    const value = object[key];
    if (value === undefined) continue; // as JSON.stringify: an undefined property is absent
    const member = `${serializeKey(key)}:${serialize(value)}`;
    if (key === omitKey) {
      omitted = member;
      at = out.length;
      continue;
    }
    out += out.length === 1 ? member : `,${member}`;
  }
  return { without: `${out}}`, omitted, at };
}

function serializeObject(object: Record<string, unknown>, omitKey: string | undefined): ObjectSerialization {
  const { without, omitted, at } = serializeMembers(object, omitKey);
  if (omitted === undefined) return { full: without, without };
  // Re-insert the omitted member at its sorted place, with the comma on the correct side.
  const full =
    without.length === 2
      ? `{${omitted}}`
      : at === 1
        ? `{${omitted},${without.slice(1)}`
        : `${without.slice(0, at)},${omitted}${without.slice(at)}`;
  return { full, without };
}

/**
 * Serializes a JSON value in its RFC 8785 canonical form: sorted keys, no
 * insignificant whitespace, ECMAScript number formatting. Properties whose
 * value is `undefined` are omitted, as `JSON.stringify` does.
 *
 * @throws {AuditChainError} `INVALID_JSON_VALUE` for NaN, Infinity, lone
 * surrogates, bigint, functions, symbols and non-plain objects.
 * @example
 * ```ts
 * canonicalize({ b: [1e30, 4.5], a: 'é' }); // '{"a":"é","b":[1e+30,4.5]}'
 * ```
 */
export function canonicalize(value: unknown): string {
  if (value === undefined) throw new AuditChainError('INVALID_JSON_VALUE', 'undefined has no JSON form');
  return serialize(value);
}

/**
 * Canonicalizes an object twice in one pass: whole, and without one
 * top-level key. The chain hashes an entry without its `hash` member and
 * stores it with it; doing both at once halves the verifier's work.
 */
export function canonicalizeWithout(object: Record<string, unknown>, omitKey: string): ObjectSerialization {
  return serializeObject(object, omitKey);
}
