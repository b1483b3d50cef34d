/**
 * @module @switchyard/observability/logging
 * Log plumbing under `createLogger`: the destination a logger writes to
 * (stdout or a size-rotated file), the rotating file stream itself, the
 * in-memory event log, and the redaction that keeps secrets out of log
 * lines. For a host that shares one destination between its own logs and
 * observability's (the gateway's log tail does).
 *
 * @example
 * ```ts
 * import { openLogDestination } from '@switchyard/observability/logging';
 * ```
 */

export type { DestinationStream } from 'pino';
export { EventLog } from './logging/eventLog.js';
export { isoTimestamp } from './logging/lineWriter.js';
export { openLogDestination } from './logging/logger.js';
export { REDACTED, redactSecrets, SECRET_KEYS, scrubSecrets } from './logging/redaction.js';
export { RotatingFileStream, type RotatingFileStreamOptions } from './logging/rotatingFileStream.js';
