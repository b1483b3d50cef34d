/**
 * @module logger
 * The JSON-lines logger: pino with the field names the docs promise
 * (`timestamp` in ISO 8601, `level` as a word, `msg`), secrets redacted by
 * key and scrubbed from messages and errors, written to stdout, stderr or a
 * size-rotated file.
 */
import { type Clock, systemClock } from '@switchyard/runtime';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { LoggingConfig } from '../config/schemas.js';
import { BatchedFdStream } from './batchedFdStream.js';
import { attachLineWriter, isoTimestamp } from './lineWriter.js';
import { REDACTED, redactSecrets, scrubSecrets } from './redaction.js';
import { RotatingFileStream } from './rotatingFileStream.js';

/** The logger type: pino's. */
export type { Logger } from 'pino';

/** Options of {@link createLogger}. */
export interface CreateLoggerOptions {
  /** Where lines go; overrides `config.output` (tests, embedding). */
  destination?: DestinationStream;
  /** Source of `timestamp`. */
  clock?: Clock;
  /** Fields on every line (`service`, `node`). */
  base?: Record<string, unknown>;
  /** Write synchronously (default false: asynchronous writes, lines that arrive during one batched into the next). */
  sync?: boolean;
}

/** A logger and its destination, which the owner closes on shutdown. */
export interface LoggerHandle {
  logger: Logger;
  destination: DestinationStream;
  /** Flushes and closes the destination (not stdout/stderr). */
  close(): Promise<void>;
}

function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const out = pino.stdSerializers.err(error) as { message?: string; stack?: string; [key: string]: unknown };
  if (typeof out.message === 'string') out.message = scrubSecrets(out.message);
  if (typeof out.stack === 'string') out.stack = scrubSecrets(out.stack);
  return out;
}

/** The `,"timestamp":"…"` member pino puts on each line, read from `clock`. */
function timestampOf(clock: Clock): () => string {
  return () => `,"timestamp":"${isoTimestamp(clock.now())}"`;
}

/**
 * pino options with Switchyard's line format and redaction. Exposed for
 * users who bring their own destination or transport.
 *
 * @example
 * ```ts
 * const logger = pino(loggerOptions({ level: 'debug' }), process.stdout);
 * ```
 */
export function loggerOptions(
  settings: { level?: LoggingConfig['level']; redact?: readonly string[] } = {},
  options: Pick<CreateLoggerOptions, 'clock' | 'base'> = {},
): LoggerOptions {
  const clock = options.clock ?? systemClock;
  return {
    level: settings.level ?? 'info',
    messageKey: 'msg',
    base: options.base ?? null,
    timestamp: timestampOf(clock),
    formatters: { level: (label) => ({ level: label }), log: (object) => redactSecrets(object) },
    ...(settings.redact && settings.redact.length > 0 ? { redact: { paths: [...settings.redact], censor: REDACTED } } : {}),
    serializers: { err: serializeError, error: serializeError },
    hooks: {
      logMethod(args, method) {
        // Scrub string arguments (the message and printf values); objects go through `redact`.
        for (let i = 0; i < args.length; i++) {
          const arg = args[i];
          if (typeof arg === 'string') (args as unknown[])[i] = scrubSecrets(arg);
        }
        return method.apply(this, args as Parameters<typeof method>);
      },
    },
  };
}

/**
 * Builds the logger from the `logging` config section.
 *
 * @example
 * ```ts
 * const { logger, close } = createLogger(loggingConfigSchema.parse({ level: 'debug', output: 'file', file: './logs/gw.log' }));
 * logger.info({ provider: 'openai' }, 'started');
 * await close();
 * ```
 */
export function createLogger(config: LoggingConfig, options: CreateLoggerOptions = {}): LoggerHandle {
  const destination = options.destination ?? openLogDestination(config, options);
  const logger = pino(loggerOptions({ level: config.level, redact: config.redact }, options), destination);
  // `logging.redact` paths may name any field, so a logger with them writes every line through pino's redaction.
  if (config.redact.length === 0) attachLineWriter(logger, destination, timestampOf(options.clock ?? systemClock), options.base ?? null);
  return {
    logger,
    destination,
    async close() {
      if (destination instanceof RotatingFileStream) return destination.close();
      const flushable = destination as { flush?: (cb: (error?: Error) => void) => void };
      if (typeof flushable.flush === 'function') await new Promise<void>((resolve) => flushable.flush!(() => resolve()));
    },
  };
}

/** The destination `logging` configures: stdout, stderr, or a rotated file. */
export function openLogDestination(config: LoggingConfig, options: CreateLoggerOptions = {}): DestinationStream {
  const sync = options.sync ?? false;
  if (config.output === 'file') {
    return new RotatingFileStream({
      path: config.file,
      maxSize: config.rotation.enabled ? config.rotation.max_size : 0,
      maxAgeMs: config.rotation.enabled ? config.rotation.max_age : 0,
      maxBackups: config.rotation.enabled ? config.rotation.max_backups : 0,
      clock: options.clock ?? systemClock,
      sync,
    });
  }
  const fd = config.output === 'stderr' ? 2 : 1;
  if (sync) return pino.destination({ fd, sync });
  // Lines are gathered up to STDOUT_BATCH_CHARS and written together, and whatever is gathered is
  // written every STDOUT_FLUSH_MS: a quiet gateway's lines (its start, a reload, an error at night)
  // reach `docker logs` and journald within that, never held back waiting for the batch to fill.
  // Written one by one, the request log at its default level cost a write call per request; through
  // pino's own batching (sonic-boom) it cost 5 µs a line (batchedFdStream.ts says why).
  return new BatchedFdStream({ fd, batchChars: STDOUT_BATCH_CHARS, flushMs: STDOUT_FLUSH_MS });
}

/** Log characters gathered before a write to stdout or stderr (about fifty request lines). */
export const STDOUT_BATCH_CHARS = 16 * 1024;
/** The longest a gathered line waits for its write to stdout or stderr, in ms. */
export const STDOUT_FLUSH_MS = 100;
