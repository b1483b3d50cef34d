/**
 * @module subcommandAuditLog
 * `.agileplus/audit.jsonl`: one hash-chained line per subcommand invocation
 * `{command, args, actor, exit_code, duration_ms, timestamp}` plus
 * audit-chain's `id`, `prev_hash` and `hash`, so `audit-chain verify`
 * accepts the file. Writers in several processes take the file's lock, so
 * lines never interleave, tear or fork the chain. A crash mid-write can
 * still tear the last line; {@link SubcommandAuditLog.repair} fixes that.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { type AuditEntry, AuditLog, JsonlAuditStore, type RepairResult, repairJsonlFile, verifyFile } from '@switchyard/audit-chain';
import { auditOrigin } from '../audit/auditTrail.js';
import type { WorkflowEventEmitter } from '../events.js';
import { type ConfinedFileOptions, openConfinedFile } from '../git/confinedFile.js';
import { confinedPath } from '../git/safety.js';
import { type Clock, systemClock } from '../util/clock.js';

/** Where the log lives, relative to the repository root. */
export const SUBCOMMAND_LOG_PATH = join('.agileplus', 'audit.jsonl');

/** The chain name inside the origin: `workflow:<repo name>/subcommands`. */
export const SUBCOMMAND_CHAIN = 'subcommands';

/** One invocation. */
export interface SubcommandRecord {
  command: string;
  args: Record<string, unknown>;
  actor: string;
  exit_code: number;
  duration_ms: number;
  /**
   * What a maintenance command did to the log itself (`audit repair`: action, removed_bytes), or why
   * a run failed or was refused (`{ error: { code, message } }`).
   */
  result?: Record<string, unknown>;
  /** Deprecation warnings the call drew (a `legacy:*` subcommand, a deprecated argument name). */
  warnings?: string[];
}

const SECRET_KEY = /(token|secret|password|passphrase|api[_-]?key|authorization|credential|private[_-]?key)/i;
const MAX_STRING = 512;

/**
 * Makes arguments safe and small to log: secret-looking keys are redacted,
 * and long strings (artifact contents) are replaced by their size and hash.
 */
export function sanitizeArgs(args: Record<string, unknown>): Record<string, unknown> {
  const clean = (key: string, value: unknown): unknown => {
    if (SECRET_KEY.test(key) && value !== undefined && value !== null) return '[redacted]';
    if (typeof value === 'string' && value.length > MAX_STRING) {
      return `[${Buffer.byteLength(value)} bytes sha256:${createHash('sha256').update(value).digest('hex')}]`;
    }
    if (Array.isArray(value)) return value.map((v) => clean('', v));
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clean(k, v)]));
    if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
    return value;
  };
  return Object.fromEntries(
    Object.entries(args)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, clean(k, v)]),
  );
}

/** Options of {@link SubcommandAuditLog.open}. */
export interface SubcommandAuditLogOptions {
  /** Names the origin (default: the repository directory's name). */
  repoName?: string;
  clock?: Clock;
  events?: WorkflowEventEmitter;
  /** How long to wait for another process's lock (default 10 s). */
  lockTimeoutMs?: number;
  /** Runs between the path check and opening the file: a seam for tests that swap a directory for a symlink there. */
  beforeOpen?: ConfinedFileOptions['beforeOpen'];
}

/**
 * Opens the log through its checked parent directory and never through a symlink in
 * its place (see `confinedFile.ts`), so a link swapped in after `confinedPath` looked
 * cannot send lines, or a repair's truncation, outside the repository.
 */
function logOpener(repoRoot: string, flags: number, beforeOpen: ConfinedFileOptions['beforeOpen']) {
  return () => openConfinedFile(repoRoot, SUBCOMMAND_LOG_PATH, flags, { field: 'audit_log', beforeOpen });
}

/**
 * The subcommand audit log of one repository.
 *
 * @example
 * ```ts
 * const log = await SubcommandAuditLog.open('/path/to/repo');
 * await log.record({ command: 'branch:create', args: { name: 'x' }, actor: 'alice', exit_code: 0, duration_ms: 12 });
 * await log.close();
 * ```
 */
export class SubcommandAuditLog {
  readonly path: string;
  readonly origin: string;
  private readonly store: JsonlAuditStore;
  private readonly log: AuditLog;
  private readonly clock: Clock;
  private readonly events: WorkflowEventEmitter | undefined;
  /** Warnings every record of this view carries (see {@link SubcommandAuditLog.withWarnings}). */
  private warnings: readonly string[] = [];

  private constructor(path: string, origin: string, store: JsonlAuditStore, options: SubcommandAuditLogOptions) {
    this.path = path;
    this.origin = origin;
    this.store = store;
    this.clock = options.clock ?? systemClock;
    this.events = options.events;
    this.log = new AuditLog(store, { origin, now: () => new Date(this.clock.now()) });
  }

  /**
   * Opens (creating) `<repoRoot>/.agileplus/audit.jsonl` for appending from this and other
   * processes. A log that leads outside the repository through a symlink is refused
   * (`path_escape`), as {@link SubcommandAuditLog.repair} refuses it: no line is written there.
   */
  static async open(repoRoot: string, options: SubcommandAuditLogOptions = {}): Promise<SubcommandAuditLog> {
    const path = await confinedPath(resolve(repoRoot), SUBCOMMAND_LOG_PATH, 'audit_log');
    const origin = auditOrigin(options.repoName ?? basename(resolve(repoRoot)), SUBCOMMAND_CHAIN);
    const store = await JsonlAuditStore.open(path, {
      multiProcess: true,
      lockTimeoutMs: options.lockTimeoutMs ?? 10_000,
      openFile: logOpener(resolve(repoRoot), constants.O_RDWR | constants.O_APPEND | constants.O_CREAT, options.beforeOpen),
    });
    return new SubcommandAuditLog(path, origin, store, options);
  }

  /**
   * Repairs a torn last line of `<repoRoot>/.agileplus/audit.jsonl` (a crash mid-write), which
   * makes {@link SubcommandAuditLog.open} fail with `TORN_TAIL`. Never drops a complete entry;
   * refuses a log that leads outside the repository through a symlink (`path_escape`). Call it
   * while no writer holds the file open; it takes the same lock writers take.
   *
   * @example
   * ```ts
   * const { action, removed_bytes } = await SubcommandAuditLog.repair('/path/to/repo');
   * ```
   */
  static async repair(repoRoot: string, options: Pick<SubcommandAuditLogOptions, 'repoName' | 'beforeOpen'> = {}): Promise<RepairResult> {
    const path = await confinedPath(resolve(repoRoot), SUBCOMMAND_LOG_PATH, 'audit_log');
    const exists = await access(path).then(
      () => true,
      () => false,
    );
    if (!exists) return { action: 'none', removed_bytes: 0, message: 'there is no audit log yet' };
    const origin = auditOrigin(options.repoName ?? basename(resolve(repoRoot)), SUBCOMMAND_CHAIN);
    return repairJsonlFile(path, { origin, openFile: logOpener(resolve(repoRoot), constants.O_RDWR, options.beforeOpen) });
  }

  /**
   * This log, with `warnings` added to each line written through the returned view (the same
   * file, chain and lock). It lets the runner that writes a call's one line carry the
   * deprecation warnings its caller found.
   *
   * @example
   * ```ts
   * await log.withWarnings(['paths is deprecated; use files']).record(record);
   * ```
   */
  withWarnings(warnings: readonly string[]): SubcommandAuditLog {
    if (warnings.length === 0) return this;
    const view = Object.create(this) as SubcommandAuditLog;
    view.warnings = [...this.warnings, ...warnings];
    return view;
  }

  /** Appends one line; resolves once it is on disk. */
  async record(record: SubcommandRecord): Promise<AuditEntry> {
    const warnings = [...this.warnings, ...(record.warnings ?? [])];
    const entry = await this.log.append({
      command: record.command,
      args: sanitizeArgs(record.args) as never,
      actor: record.actor,
      exit_code: record.exit_code,
      duration_ms: Math.max(0, Math.round(record.duration_ms)),
      ...(record.result !== undefined ? { result: sanitizeArgs(record.result) as never } : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
    });
    this.events?.emit('workflow:subcommand', {
      command: record.command,
      exitCode: record.exit_code,
      durationMs: entry.duration_ms as number,
      at: this.clock.now(),
    });
    return entry;
  }

  /** Verifies the whole file against this repository's origin. */
  verify() {
    return verifyFile(this.path, { origin: this.origin });
  }

  /** The most recent lines, newest last. */
  async tail(limit = 50): Promise<AuditEntry[]> {
    const out: AuditEntry[] = [];
    for await (const entry of this.store.read()) {
      out.push(entry);
      if (out.length > limit) out.shift();
    }
    return out;
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
