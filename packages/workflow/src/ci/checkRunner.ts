/**
 * @module checkRunner
 * Runs a repository's own checks (the local CI command: tests, lint, a
 * security scan) in a directory, one after another, each a program and its
 * arguments spawned without a shell. Each run is reported with its exit
 * code, duration and a SHA-256 of its whole output, so the evidence the
 * gates read names exactly what ran and what it printed.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { WorkflowError } from '../errors.js';
import { assertSafeArgument } from '../git/safety.js';
import { type Clock, systemClock } from '../util/clock.js';

/** What a check is for; each kind is recorded as its own evidence type. */
export type CheckKind = 'test' | 'lint' | 'security';

/** One configured check: a name, a kind and the command (program first). */
export interface CheckCommand {
  name: string;
  kind: CheckKind;
  run: readonly string[];
}

/** The result of one check. */
export interface CheckRun {
  name: string;
  kind: CheckKind;
  command: string[];
  exit_code: number;
  duration_ms: number;
  /** `sha256:<hex>` of everything the check printed (stdout and stderr, as they interleaved). */
  output_hash: string;
  output_bytes: number;
  /** The last few KiB of output, for a person reading the evidence. */
  output_tail: string;
  passed: boolean;
  /** Set when the check was stopped for running too long. */
  timed_out?: boolean;
}

/** The evidence type each kind of check is recorded as. */
export const CHECK_EVIDENCE_TYPE = {
  test: 'test_result',
  lint: 'lint_result',
  security: 'security_scan',
} as const satisfies Record<CheckKind, string>;

/** Options of {@link CheckRunner}. */
export interface CheckRunnerOptions {
  checks: readonly CheckCommand[];
  /** A check running longer is stopped and fails (default 30 min). */
  timeoutMs?: number;
  /** Output kept in `output_tail` (default 4 KiB). */
  tailBytes?: number;
  /** Extra environment for the checks. */
  env?: Record<string, string>;
  clock?: Clock;
}

/** Progress callbacks: a check starts, a check ended. */
export interface CheckHooks {
  onStart?(check: CheckCommand): void;
  onEnd?(run: CheckRun): void;
  signal?: AbortSignal;
}

/**
 * @example
 * ```ts
 * const runner = new CheckRunner({ checks: [{ name: 'npm test', kind: 'test', run: ['npm', 'test'] }] });
 * const runs = await runner.runAll('/repo/.worktrees/login-wp01');
 * runs.every((r) => r.passed);
 * ```
 */
export class CheckRunner {
  readonly checks: readonly CheckCommand[];
  private readonly clock: Clock;

  constructor(private readonly options: CheckRunnerOptions) {
    for (const check of options.checks) {
      if (check.run.length === 0) throw new WorkflowError('invalid_argument', `check ${check.name}: an empty command`);
      assertSafeArgument(check.run[0]!, 'run');
    }
    this.checks = options.checks;
    this.clock = options.clock ?? systemClock;
  }

  /** Runs every check in `cwd`, in order (a failing one does not stop the rest: each is evidence). */
  async runAll(cwd: string, hooks: CheckHooks = {}): Promise<CheckRun[]> {
    const runs: CheckRun[] = [];
    for (const check of this.checks) {
      hooks.signal?.throwIfAborted();
      hooks.onStart?.(check);
      const run = await this.runOne(check, cwd, hooks.signal);
      hooks.onEnd?.(run);
      runs.push(run);
    }
    return runs;
  }

  /** Runs one check in `cwd`. A program that cannot start is a failed run (exit 127), not an exception. */
  runOne(check: CheckCommand, cwd: string, signal?: AbortSignal): Promise<CheckRun> {
    const started = this.clock.now();
    const hash = createHash('sha256');
    const tailLimit = this.options.tailBytes ?? 4096;
    let tail = Buffer.alloc(0);
    let bytes = 0;
    const collect = (chunk: Buffer) => {
      hash.update(chunk);
      bytes += chunk.length;
      tail = Buffer.concat([tail, chunk]);
      if (tail.length > tailLimit) tail = tail.subarray(tail.length - tailLimit);
    };
    return new Promise((resolve, reject) => {
      const [program, ...args] = check.run;
      const child = spawn(program!, args, {
        cwd,
        env: { ...process.env, CI: 'true', ...this.options.env },
        stdio: ['ignore', 'pipe', 'pipe'],
        shell: false,
      });
      let timedOut = false;
      const timer = setTimeout(
        () => {
          timedOut = true;
          child.kill('SIGKILL');
        },
        this.options.timeoutMs ?? 30 * 60_000,
      );
      const onAbort = () => child.kill('SIGKILL');
      signal?.addEventListener('abort', onAbort, { once: true });
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      let finished = false;
      const finish = (exitCode: number) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (signal?.aborted) {
          reject(new WorkflowError('cancelled', `check ${check.name} was cancelled`));
          return;
        }
        resolve({
          name: check.name,
          kind: check.kind,
          command: [...check.run],
          exit_code: exitCode,
          duration_ms: Math.max(0, Math.round(this.clock.now() - started)),
          output_hash: `sha256:${hash.digest('hex')}`,
          output_bytes: bytes,
          output_tail: tail.toString('utf8'),
          passed: exitCode === 0 && !timedOut,
          ...(timedOut ? { timed_out: true } : {}),
        });
      };
      child.on('error', (error) => {
        collect(Buffer.from(`${program}: ${error.message}\n`));
        finish(127);
      });
      child.on('close', (code, killed) => finish(code ?? (killed ? 128 : 1)));
    });
  }
}
