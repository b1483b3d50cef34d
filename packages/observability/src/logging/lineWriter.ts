/**
 * @module lineWriter
 * A second way to write a log line, for the one line every request writes: the
 * caller hands over its fields already as JSON and this module frames them as
 * pino would (`level`, `timestamp`, the logger's base fields, the fields,
 * `msg`), byte for byte, and writes the result to the logger's destination.
 *
 * Why: pino serializes a line generically, walking the object with its
 * formatters, redaction hook and per-key checks, about 3.5 µs a line here
 * against well under one for a template; at the request log's rate that is a
 * few percent of a core. Only loggers built by {@link createLogger} from our
 * options get a writer, and only when nothing a template would skip is
 * configured (no `logging.redact` paths, no destination asking pino for line
 * metadata); any other logger (a child, an embedder's own) has none, and its
 * callers log through pino as before.
 */
import type { DestinationStream, Logger } from 'pino';

/** Levels a {@link LineWriter} writes at. */
export type LineLevel = 'info' | 'warn' | 'error';

/** Writes pre-serialized lines in the logger's own format. */
export interface LineWriter {
  /**
   * Writes `{"level":…,"timestamp":…,<base>,<fields>,"msg":…}` if `level` is enabled on the logger.
   * `fields` is JSON members, each led by a comma (`,"a":1,"b":"x"`), with no secret in them: the
   * redaction walk is not applied. `msg` is a fixed event name, not text from a request.
   */
  write(level: LineLevel, fields: string, msg: string): void;
}

const writers = new WeakMap<Logger, LineWriter>();

/** The line writer of a logger {@link createLogger} built, or undefined (then log through pino). */
export function lineWriterOf(logger: Logger): LineWriter | undefined {
  return writers.get(logger);
}

/** The JSON members pino writes for a logger's `base` fields (`,"service":"switchyard"`). */
function baseMembers(base: Record<string, unknown> | null): string {
  let out = '';
  if (base === null) return out;
  for (const [key, value] of Object.entries(base)) {
    if (value !== undefined) out += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
  }
  return out;
}

/**
 * Gives `logger` a line writer onto `destination` (what {@link createLogger} does when nothing a template
 * would skip is configured). `timestamp` returns the `,"timestamp":"…"` member, as pino's option does.
 */
export function attachLineWriter(
  logger: Logger,
  destination: DestinationStream,
  timestamp: () => string,
  base: Record<string, unknown> | null,
): void {
  // A destination that asks pino for each line's level and object (pino.multistream) needs pino's path.
  if ((destination as unknown as Record<symbol, unknown>)[Symbol.for('pino.metadata')] === true) return;
  const members = baseMembers(base);
  writers.set(logger, {
    write(level, fields, msg) {
      if (!logger.isLevelEnabled(level)) return;
      destination.write(`{"level":"${level}"${timestamp()}${members}${fields},"msg":${JSON.stringify(msg)}}\n`);
    },
  });
}

let cachedSecond = Number.NaN;
let cachedPrefix = '';

/**
 * `new Date(ms).toISOString()`, with the part up to the second built once per second: most lines of a
 * busy gateway share their second with the line before, and the Date object and its formatting were
 * most of the timestamp's cost.
 */
export function isoTimestamp(time: number): string {
  // Date drops a fraction of a millisecond toward zero (-0.5 is 1970's first millisecond).
  const ms = Math.trunc(time);
  const second = Math.floor(ms / 1000);
  if (second !== cachedSecond) {
    const iso = new Date(second * 1000).toISOString();
    // Years outside 0000-9999 have a longer form; those are formatted whole.
    if (iso.length !== 24) return new Date(ms).toISOString();
    cachedSecond = second;
    cachedPrefix = iso.slice(0, 20);
  }
  const millis = Math.floor(ms - second * 1000);
  return `${cachedPrefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}
