/**
 * @module logger
 * The logging port: the subset of pino's API the package uses, so a pino
 * logger (or any object with these methods) plugs in. The package logs ids,
 * codes and counts; it never passes a token or a record with secrets.
 */

/** A pino-compatible logger. */
export interface CredentialsLogger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** A logger that drops everything (the default). */
export const silentLogger: CredentialsLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
