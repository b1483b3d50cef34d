import assert from 'node:assert/strict';
/**
 * Test helpers: temporary git repositories, `yard` run in-process through
 * `main` (fast, same code path as the bin) or as a real process from source.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type TempGitRepo, tempGitRepo, workspaceProgram } from '@switchyard/test-support';
import type { CliIO } from '../src/io.js';
import { main } from '../src/main.js';

export const YARD_BIN = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
/**
 * How a test starts `yard` as a process: the build when it is fresh, else the source through tsx
 * (by absolute URL, since children run in temporary repositories). See test-support's workspaceProgram.
 */
export const YARD = workspaceProgram(YARD_BIN);
/**
 * NODE_OPTIONS for the processes a test's in-process `yard` starts (agents): without tsx when `yard`
 * runs built, since agents are plain JavaScript and tsx costs about 0.4 s a process.
 */
export const CHILD_NODE_OPTIONS = YARD.env.NODE_OPTIONS;

export type TempRepo = TempGitRepo;

/** `main` with two commits (the second changes line 2 of README.md), from test-support. */
export function tempRepo(prefix = 'yard-'): Promise<TempRepo> {
  return tempGitRepo({ prefix, readmeVersions: ['# demo\n\nline 1\nline 2\nline 3\n', '# demo\n\nline 1\nline 2 changed\nline 3\n'] });
}

export interface YardResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (throws with the output when it is not one document). */
  json<T = unknown>(): T;
}

function result(code: number, stdout: string, stderr: string): YardResult {
  return {
    code,
    stdout,
    stderr,
    json: <T>() => {
      try {
        return JSON.parse(stdout) as T;
      } catch {
        throw new Error(`stdout is not one JSON document (exit ${code}):\n${stdout}\nstderr:\n${stderr}`);
      }
    },
  };
}

/** Runs `yard` in-process. */
export async function yard(args: string[], options: { cwd: string; stdin?: string; env?: Record<string, string> }): Promise<YardResult> {
  let stdout = '';
  let stderr = '';
  const io: CliIO = {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    readStdin: async () => Buffer.from(options.stdin ?? ''),
    stdinIsTTY: false,
    env: options.env ?? {},
    cwd: options.cwd,
  };
  const code = await main(args, io);
  return result(code, stdout, stderr);
}

/**
 * `yard <args> --output json` in the directory `cwd()` names when called (a repository made in `before`),
 * asserting exit 0 and returning the parsed output.
 */
export function yardJson(cwd: () => string) {
  return async <T>(...args: string[]): Promise<T> => {
    const r = await yard([...args, '--output', 'json'], { cwd: cwd() });
    assert.equal(r.code, 0, `yard ${args.join(' ')}: ${r.stderr}`);
    return r.json<T>();
  };
}

/** Runs the real `yard` bin as a process (built or from source, see {@link YARD}). */
export function yardProcess(args: string[], options: { cwd: string; stdin?: string; env?: Record<string, string> }): Promise<YardResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...YARD.args, ...args],
      { cwd: options.cwd, env: { ...process.env, ...YARD.env, ...options.env }, timeout: 120_000 },
      (error, stdout, stderr) => resolve(result(error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr)),
    );
    child.stdin?.end(options.stdin ?? '');
  });
}

/** The lines of `.agileplus/audit.jsonl`, parsed. */
export async function auditLines(root: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(join(root, '.agileplus', 'audit.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A `yard serve` running in this process until `stop`. */
export interface ServingYard {
  http: string | null;
  grpc: string | null;
  /** Stops the server; resolves with its exit code. */
  stop(): Promise<number>;
}

/** Runs `yard serve <args> --output json` in-process in `cwd`; resolves once it printed its addresses. */
export async function serveInProcess(cwd: string, args: string[]): Promise<ServingYard> {
  let stop: (signal: string) => void = () => undefined;
  let serving: Promise<number> = Promise.resolve(0);
  const addresses = await new Promise<{ http: string | null; grpc: string | null }>((resolve, reject) => {
    serving = main(['serve', ...args, '--output', 'json'], {
      stdout: (text) => resolve(JSON.parse(text) as { http: string | null; grpc: string | null }),
      stderr: () => undefined,
      readStdin: async () => Buffer.alloc(0),
      stdinIsTTY: false,
      env: {},
      cwd,
      stopSignal: new Promise((resolveStop) => {
        stop = resolveStop;
      }),
    });
    void serving.then((code) => reject(new Error(`serve exited ${code}`)));
  });
  return {
    ...addresses,
    stop: () => {
      stop('SIGTERM');
      return serving;
    },
  };
}
