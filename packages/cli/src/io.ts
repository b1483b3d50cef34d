/**
 * @module io
 * What a command talks to: standard streams, the environment and the
 * working directory, injected so tests run `main` in-process, plus the
 * global options every command shares. `--output json` makes every command
 * print exactly one JSON document on stdout and errors as
 * `{"error":{"code","message"}}` on stderr.
 */
import { CliError } from './errors.js';

/** Standard streams and process facts. */
export interface CliIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Reads all of standard input. */
  readStdin(): Promise<Buffer>;
  /** Whether standard input is a terminal (then `artifact:write` and `dispatch` say they are waiting). */
  stdinIsTTY: boolean;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM, or SIGHUP: its terminal closed); servers close then. */
  stopSignal?: Promise<string>;
  /**
   * Standard input as keys, for `yard agent attach`: raw mode on a terminal (each key as typed,
   * Ctrl-C included); `restore` puts the terminal back.
   */
  openKeys?(): { keys: AsyncIterable<Buffer | string>; restore(): void };
}

export const OUTPUT_FORMATS = ['table', 'json', 'markdown'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Options that every command accepts, before or after its name. */
export interface GlobalOptions {
  /** 0 quiet progress, 1 (`-v`) details, 2 (`-vv`) debug (stack traces). */
  verbose: number;
  db?: string;
  repo?: string;
  actor?: string;
  config?: string;
  output: OutputFormat;
}

/** Checks an `--output` value. */
export function outputFormat(value: string): OutputFormat {
  if ((OUTPUT_FORMATS as readonly string[]).includes(value)) return value as OutputFormat;
  throw new CliError('invalid_argument', `--output: expected ${OUTPUT_FORMATS.join(', ')}; got ${JSON.stringify(value)}`, {
    field: 'output',
  });
}

/** The process's streams. */
export function processIO(): CliIO {
  const io: CliIO = {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },
    stdinIsTTY: process.stdin.isTTY === true,
    env: process.env,
    cwd: process.cwd(),
    openKeys: () => {
      const raw = process.stdin.isTTY === true;
      if (raw) process.stdin.setRawMode(true);
      return {
        keys: process.stdin,
        restore: () => {
          if (raw) process.stdin.setRawMode(false);
          process.stdin.pause();
        },
      };
    },
  };
  // Installed only when a command asks for it (the servers, `implement`, the MCP server): a handler
  // for SIGINT/SIGTERM/SIGHUP replaces Node's default exit, so a command that never listens would keep
  // running through Ctrl-C or `kill`, stuck on a read. Not enumerable, so a spread copy of the
  // streams (`{ ...io }`) does not install it either.
  let stopSignal: Promise<string> | undefined;
  Object.defineProperty(io, 'stopSignal', {
    enumerable: false,
    get: () =>
      (stopSignal ??= new Promise((resolve) => {
        const stop = (signal: string) => resolve(signal);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        // A closed terminal: agents run in process groups of their own and would not get its hangup.
        process.once('SIGHUP', stop);
      })),
  });
  return io;
}
