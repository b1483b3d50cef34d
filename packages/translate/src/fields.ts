/**
 * @module fields
 * Readers for untrusted JSON that fail with a {@link TranslationError}
 * naming the exact field (`messages[3].content[0].image_url`), so a client
 * always learns what to fix and never sees a crash.
 */
import { TranslationError } from './errors.js';

/** A JSON object. */
export type Json = Record<string, unknown>;

/** Throws `invalid_request` for `path`. */
export function invalid(path: string, message: string): never {
  throw new TranslationError('invalid_request', `${path} ${message}`, path);
}

/** Throws `unsupported_translation` for `path`. */
export function unsupported(path: string, message: string): never {
  throw new TranslationError('unsupported_translation', `${path}: ${message}`, path);
}

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

export function object(value: unknown, path: string): Json {
  if (!isObject(value)) invalid(path, 'must be an object');
  return value;
}

export function array(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) invalid(path, 'must be an array');
  return value;
}

export function string(value: unknown, path: string): string {
  if (typeof value !== 'string') invalid(path, 'must be a string');
  return value;
}

export function optionalString(value: unknown, path: string): string | undefined {
  return value === undefined || value === null ? undefined : string(value, path);
}

export function optionalNumber(value: unknown, path: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) invalid(path, 'must be a number');
  return value;
}

export function optionalInteger(value: unknown, path: string): number | undefined {
  const number = optionalNumber(value, path);
  if (number !== undefined && !Number.isInteger(number)) invalid(path, 'must be an integer');
  return number;
}

export function optionalBoolean(value: unknown, path: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') invalid(path, 'must be a boolean');
  return value;
}

/** `stop`-style fields: a string or an array of strings. */
export function stringList(value: unknown, path: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return [value];
  return array(value, path).map((item, i) => string(item, `${path}[${i}]`));
}

/** Parses tool-call arguments into the object Anthropic and Gemini want ("" is `{}`). */
export function parseArguments(text: string, path: string): Json {
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    invalid(path, 'must be a JSON object in text form');
  }
  if (!isObject(parsed)) invalid(path, 'must encode a JSON object');
  return parsed;
}

/**
 * Parses the arguments of a tool call in a provider's answer into the object
 * Anthropic and Gemini want ("" is `{}`). Text that is not JSON is the
 * provider's fault: a `TranslationError` with code `invalid_response`.
 */
export function parseAnswerArguments(text: string, toolName: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new TranslationError(
      'invalid_response',
      `the provider returned tool call arguments that are not JSON (tool ${toolName})`,
      undefined,
      { cause },
    );
  }
}

/** Notes every key of `body` not in `known` as dropped. */
export function noteUnknown(body: Json, known: ReadonlySet<string>, dropped: string[], prefix = ''): void {
  for (const key of Object.keys(body)) if (!known.has(key) && body[key] !== undefined) dropped.push(`${prefix}${key}`);
}

/** `data:` URL parts, or undefined for any other URL. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1]!, data: match[2]! } : undefined;
}

const EXTENSION_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
};

/** The media type a URL's file extension implies, if it is a known one. */
export function mediaTypeOfUrl(url: string): string | undefined {
  try {
    const extension = new URL(url).pathname.split('.').pop()?.toLowerCase();
    return extension ? EXTENSION_TYPES[extension] : undefined;
  } catch {
    return undefined;
  }
}

/** `T` with every member that may be undefined made optional instead. */
export type Compacted<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

/** Drops `undefined` members, so encoders can build bodies with optional fields inline. */
export function compact<T extends object>(value: T): Compacted<T> {
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) if (record[key] === undefined) delete record[key];
  return value as Compacted<T>;
}
