/**
 * @module subcommandAuditLog
 * `.agileplus/audit.jsonl`: one hash-chained line per subcommand invocation
 * `{command, args, actor, exit_code, duration_ms, timestamp}` plus
 * audit-chain's `id`, `prev_hash` and `hash`, so `audit-chain verify`
 * accepts the file. Writers in several processes take the file's lock, so
 * lines never interleave, tear or fork the chain. A crash mid-write can
 * still tear the last line; {@link SubcommandAuditLog.repair} fixes that.
 *
 * No action runs without its record. A run first writes its intent (the
 * parsed arguments, the actor, the writing process) to a separate journal,
 * `.agileplus/audit.intents.jsonl`, under the log's lock; after the run it
 * journals the outcome, then appends the one record, which names its intent
 * (`intent`). A run killed in between, or whose append timed out on the
 * lock, leaves an intent with no record: the next {@link SubcommandAuditLog.open}
 * appends that record, with the journalled outcome (or `interrupted`) and
 * `result.recovered`, and {@link SubcommandAuditLog.verify} lists it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import {
  type AuditEntry,
  AuditLog,
  acquireFileLock,
  currentProcessIdentity,
  isProcessGone,
  JsonlAuditStore,
  type ProcessIdentity,
  parseProcessIdentity,
  type RepairResult,
  repairJsonlFile,
  verifyFile,
} from '@switchyard/audit-chain';
import { auditOrigin } from '../audit/auditTrail.js';
import type { WorkflowEventEmitter } from '../events.js';
import { type ConfinedFileOptions, openConfinedFile, readConfinedFile, writeConfinedFile } from '../git/confinedFile.js';
import { confinedPath } from '../git/safety.js';
import { type Clock, systemClock } from '../util/clock.js';
import { EXIT_CODES } from './exitCodes.js';

/** Where the log lives, relative to the repository root. */
export const SUBCOMMAND_LOG_PATH = join('.agileplus', 'audit.jsonl');

/** The intent journal, relative to the repository root: what each run set out to do, before it ran. */
export const SUBCOMMAND_INTENT_PATH = join('.agileplus', 'audit.intents.jsonl');

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

/** A run's intent, journalled before it runs ({@link SubcommandAuditLog.begin}). */
export interface SubcommandIntent {
  id: string;
  command: string;
  args: Record<string, unknown>;
  actor: string;
  /** When the run started (ISO 8601). */
  at: string;
  /** Deprecation warnings of the call (see {@link SubcommandAuditLog.withWarnings}). */
  warnings?: string[];
}

/** The one record of a run, from its intent and its outcome. */
function recordOf(intent: SubcommandIntent, outcome: SubcommandRunOutcome): SubcommandRecord {
  return {
    command: intent.command,
    args: intent.args,
    actor: intent.actor,
    ...outcome,
    ...(intent.warnings !== undefined ? { warnings: intent.warnings } : {}),
  };
}

/** What a finished run did, for {@link SubcommandAuditLog.finish}. */
export type SubcommandRunOutcome = Pick<SubcommandRecord, 'exit_code' | 'duration_ms' | 'result'>;

/** A record appended at open for an intent left without one. */
export interface RecoveredRecord {
  id: number;
  command: string;
  intent: string;
  /** Whether the journal held the run's outcome (else it was cut off: `interrupted`). */
  outcome_recorded: boolean;
}

/** {@link SubcommandAuditLog.verify}'s answer: the chain's verification, and the records appended by recovery. */
export type SubcommandLogVerification = Awaited<ReturnType<typeof verifyFile>> & {
  /** Records appended at a later start for runs that left only an intent: flagged for review. */
  recovered: RecoveredRecord[];
};

type JournalLine =
  /** `after`: an id the log had reached before the intent was written; its record comes later. */
  | ({ type: 'intent'; owner: ProcessIdentity; after?: number } & SubcommandIntent)
  | ({ type: 'outcome'; id: string } & SubcommandRunOutcome);

/** Every this many records, a log compacts its intent journal (dropping the runs that have their record). */
const COMPACT_EVERY = 64;

/** The `interrupted` error of a recovered record whose run left no outcome. */
const INTERRUPTED = {
  code: 'interrupted',
  message: 'the run ended before its outcome was recorded (killed or crashed); recovered from the intent journal',
};

const SECRET_KEY = /(token|secret|password|passphrase|api[_-]?key|authorization|credential|private[_-]?key)/i;
const MAX_STRING = 512;
/** Nesting below this depth is replaced by a marker: no schema here nests deeper, and the walk stays bounded. */
export const MAX_LOGGED_DEPTH = 8;
/** At most this many items of an array, or keys of an object, are kept. */
const MAX_ITEMS = 64;
/** A budget of characters for one record's arguments; what is past it is replaced by a marker. */
export const MAX_LOGGED_CHARS = 16_384;

const digest = (value: string) => `[${Buffer.byteLength(value)} bytes sha256:${createHash('sha256').update(value).digest('hex')}]`;

/**
 * Makes arguments safe and small to log: secret-looking keys are redacted,
 * long strings (artifact contents) are replaced by their size and hash, and
 * the whole is bounded in depth ({@link MAX_LOGGED_DEPTH}), breadth and size
 * ({@link MAX_LOGGED_CHARS}), so no argument can make the line fail to be written.
 *
 * @example
 * ```ts
 * sanitizeArgs({ token: 's3cret', name: 'x' }); // { token: '[redacted]', name: 'x' }
 * ```
 */
export function sanitizeArgs(args: Record<string, unknown>): Record<string, unknown> {
  let budget = MAX_LOGGED_CHARS;
  const spend = (value: unknown): unknown => {
    const size = typeof value === 'string' ? value.length + 2 : 8;
    if (budget < size) {
      budget = 0;
      return '[truncated]';
    }
    budget -= size;
    return value;
  };
  const clean = (key: string, value: unknown, depth: number): unknown => {
    if (SECRET_KEY.test(key) && value !== undefined && value !== null) return spend('[redacted]');
    if (typeof value === 'string') return spend(value.length > MAX_STRING ? digest(value) : value);
    if (typeof value === 'number') return spend(Number.isFinite(value) ? value : String(value));
    if (value === null || typeof value === 'boolean') return spend(value);
    if (typeof value !== 'object') return spend(`[${typeof value}]`);
    if (depth >= MAX_LOGGED_DEPTH) return spend('[too deep]');
    if (Array.isArray(value)) {
      const items = value.slice(0, MAX_ITEMS).map((v) => clean('', v, depth + 1));
      return value.length > MAX_ITEMS ? [...items, `[${value.length - MAX_ITEMS} more]`] : items;
    }
    return cleanObject(value as Record<string, unknown>, depth + 1);
  };
  const cleanObject = (value: Record<string, unknown>, depth: number): Record<string, unknown> => {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    const out: Record<string, unknown> = {};
    for (const [k, v] of entries.slice(0, MAX_ITEMS)) {
      const name = k.length > MAX_STRING ? digest(k) : k;
      budget = Math.max(0, budget - name.length);
      out[name] = clean(k, v, depth);
    }
    if (entries.length > MAX_ITEMS) out['[more keys]'] = entries.length - MAX_ITEMS;
    return out;
  };
  return cleanObject(args, 0);
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
  /** Whether the process that wrote an intent is gone (default `isProcessGone`): a seam for tests that end a run at a chosen moment. */
  ownerGone?: (owner: ProcessIdentity) => Promise<boolean>;
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
  private readonly repoRoot: string;
  private readonly lockTimeoutMs: number;
  private readonly beforeOpen: ConfinedFileOptions['beforeOpen'];
  private readonly ownerGone: (owner: ProcessIdentity) => Promise<boolean>;
  /**
   * What changes as the log is used, in one object that views ({@link withWarnings}) share with
   * the log they were made from: the process's identity, the highest entry id seen (a lower bound
   * of the head, recorded with each intent), records since the journal was last compacted, and
   * records whose append failed after their run (a lock timeout), retried before the next append
   * and at close.
   */
  private readonly state: {
    owner: Promise<ProcessIdentity> | undefined;
    lastSeenId: number;
    sinceCompaction: number;
    pending: { record: SubcommandRecord; intent: string }[];
  } = { owner: undefined, lastSeenId: 0, sinceCompaction: 0, pending: [] };
  /** Warnings every record of this view carries (see {@link SubcommandAuditLog.withWarnings}). */
  private warnings: readonly string[] = [];

  private constructor(repoRoot: string, path: string, origin: string, store: JsonlAuditStore, options: SubcommandAuditLogOptions) {
    this.repoRoot = repoRoot;
    this.path = path;
    this.origin = origin;
    this.store = store;
    this.lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
    this.beforeOpen = options.beforeOpen;
    this.ownerGone = options.ownerGone ?? ((owner) => isProcessGone(owner));
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
    const log = new SubcommandAuditLog(resolve(repoRoot), path, origin, store, options);
    try {
      log.state.lastSeenId = (await store.head()).size;
      await log.recoverIntents();
    } catch (error) {
      // A journal that cannot be read or locked now stays for the next start; the log itself works.
      if ((error as { code?: unknown }).code !== 'LOCK_TIMEOUT') {
        await log.close();
        throw error;
      }
    }
    return log;
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

  /**
   * Appends one line; resolves once it is on disk. For a refusal or a maintenance action that has
   * no run to journal; a run goes through {@link begin} and {@link finish}.
   */
  async record(record: SubcommandRecord): Promise<AuditEntry> {
    await this.retryPending();
    return this.append({ ...record, warnings: [...this.warnings, ...(record.warnings ?? [])] });
  }

  /**
   * Journals a run's intent before it runs, under the log's lock. Throws (and the caller must not
   * run) when the intent cannot be written.
   *
   * @example
   * ```ts
   * const intent = await log.begin({ command: 'branch:create', args: { name: 'x' }, actor: 'alice' });
   * const entry = await log.finish(intent, { exit_code: 0, duration_ms: 12 });
   * ```
   */
  async begin(run: Pick<SubcommandRecord, 'command' | 'args' | 'actor'>): Promise<SubcommandIntent> {
    await this.retryPending();
    const intent: SubcommandIntent = {
      id: randomUUID(),
      command: run.command,
      args: sanitizeArgs(run.args),
      actor: run.actor,
      at: new Date(this.clock.now()).toISOString(),
      ...(this.warnings.length > 0 ? { warnings: [...this.warnings] } : {}),
    };
    this.state.owner ??= currentProcessIdentity();
    const line: JournalLine = { type: 'intent', ...intent, owner: await this.state.owner, after: this.state.lastSeenId };
    const release = await acquireFileLock(`${this.path}.lock`, { timeoutMs: this.lockTimeoutMs });
    try {
      await this.journal(line);
    } finally {
      await release();
    }
    return intent;
  }

  /**
   * Journals a run's outcome, then appends its one record. When the append fails (the log's lock
   * timed out), the outcome stays in the journal: this log retries it before its next append and
   * at close, and the next {@link open} in any process appends it if this process is gone.
   */
  async finish(intent: SubcommandIntent, outcome: SubcommandRunOutcome): Promise<AuditEntry> {
    const line: JournalLine = { type: 'outcome', id: intent.id, ...outcome };
    // The journal's own lock, not the log's: an outcome must be kept even when the log's lock is what timed out.
    await this.withJournalLock(() => this.journal(line)).catch(() => undefined);
    const record = recordOf(intent, outcome);
    let entry: AuditEntry;
    try {
      entry = await this.append(record, intent.id);
    } catch (error) {
      this.state.pending.push({ record, intent: intent.id });
      throw error;
    }
    // A long-lived process (`yard serve`) opens its log once: the journal is compacted as it goes.
    if (++this.state.sinceCompaction >= COMPACT_EVERY) {
      this.state.sinceCompaction = 0;
      await this.recoverIntents().catch(() => undefined);
    }
    return entry;
  }

  private async append(record: SubcommandRecord, intent?: string, recovered?: Record<string, unknown>): Promise<AuditEntry> {
    const result = recovered ? { ...(record.result ?? {}), recovered } : record.result;
    const entry = await this.log.append({
      command: record.command,
      args: sanitizeArgs(record.args) as never,
      actor: record.actor,
      exit_code: record.exit_code,
      duration_ms: Math.max(0, Math.round(record.duration_ms)),
      ...(intent !== undefined ? { intent } : {}),
      ...(result !== undefined ? { result: sanitizeArgs(result) as never } : {}),
      ...(record.warnings !== undefined && record.warnings.length > 0 ? { warnings: [...record.warnings] } : {}),
    });
    this.state.lastSeenId = Math.max(this.state.lastSeenId, entry.id);
    this.events?.emit('workflow:subcommand', {
      command: record.command,
      exitCode: record.exit_code,
      durationMs: entry.duration_ms as number,
      at: this.clock.now(),
    });
    return entry;
  }

  /** Appends what is pending; what still fails stays pending (and journalled), and never blocks the next record. */
  private async retryPending(): Promise<void> {
    const { pending } = this.state;
    while (pending.length > 0) {
      const { record, intent } = pending[0]!;
      try {
        await this.append(record, intent);
      } catch {
        return;
      }
      pending.shift();
    }
  }

  private async journal(line: JournalLine): Promise<void> {
    const handle = await openConfinedFile(
      this.repoRoot,
      SUBCOMMAND_INTENT_PATH,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT,
      {
        field: 'audit_journal',
        beforeOpen: this.beforeOpen,
      },
    );
    try {
      await handle.write(`${JSON.stringify(line)}\n`);
      await handle.datasync();
    } finally {
      await handle.close();
    }
  }

  private async withJournalLock<T>(body: () => Promise<T>): Promise<T> {
    const journalPath = join(this.repoRoot, SUBCOMMAND_INTENT_PATH);
    const release = await acquireFileLock(`${journalPath}.lock`, { timeoutMs: this.lockTimeoutMs });
    try {
      return await body();
    } finally {
      await release();
    }
  }

  private async readJournal(): Promise<JournalLine[]> {
    let text: string;
    try {
      text = (
        await readConfinedFile(this.repoRoot, SUBCOMMAND_INTENT_PATH, { field: 'audit_journal', beforeOpen: this.beforeOpen })
      ).toString('utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const lines: JournalLine[] = [];
    for (const raw of text.split('\n')) {
      if (raw.length === 0) continue;
      try {
        const line = JSON.parse(raw) as JournalLine;
        if (typeof line?.id === 'string' && (line.type === 'intent' || line.type === 'outcome')) lines.push(line);
      } catch {
        // A line torn by a crash: its run never started (an intent) or its record is recovered as interrupted.
      }
    }
    return lines;
  }

  /** The intent ids the log's records name, from entry `fromId` on (records come after their intents). */
  private async recordedIntents(fromId: number): Promise<Set<string>> {
    const ids = new Set<string>();
    for await (const entry of this.store.read({ fromId })) if (typeof entry.intent === 'string') ids.add(entry.intent);
    return ids;
  }

  /**
   * Appends the record of every intent whose process is gone and whose record never came, then
   * drops resolved intents from the journal. Under the journal's lock, so two processes starting
   * together recover each intent once; the rewrite also holds the log's lock, under which
   * intents are written.
   */
  private async recoverIntents(): Promise<RecoveredRecord[]> {
    if ((await this.readJournal()).length === 0) return [];
    return this.withJournalLock(async () => {
      const lines = await this.readJournal();
      if (lines.length === 0) return [];
      // Only the log's tail since the oldest intent in the journal can hold their records.
      let from = Number.POSITIVE_INFINITY;
      for (const line of lines) {
        if (line.type === 'intent')
          from = Math.min(from, Number.isSafeInteger(line.after) && (line.after as number) >= 0 ? (line.after as number) : 0);
      }
      // Whose runs ended, judged before the log is read: a run appends its record without the journal's lock, so a
      // process judged gone after the read could have appended its record and exited in between, and its run would
      // be recorded twice. One gone before the read has appended all it ever will by then.
      const ended = new Set<string>();
      for (const line of lines) {
        if (line.type !== 'intent') continue;
        const owner = parseProcessIdentity(line.owner);
        // A live owner is still running, or retrying its append.
        if (!owner || (await this.ownerGone(owner))) ended.add(line.id);
      }
      const recorded = Number.isFinite(from) ? await this.recordedIntents(from + 1) : new Set<string>();
      const outcomes = new Map<string, SubcommandRunOutcome>();
      for (const line of lines) if (line.type === 'outcome') outcomes.set(line.id, line);
      const recovered: RecoveredRecord[] = [];
      for (const line of lines) {
        if (line.type !== 'intent' || recorded.has(line.id) || !ended.has(line.id)) continue;
        const outcome = outcomes.get(line.id);
        const record: SubcommandRecord = {
          command: String(line.command),
          args: line.args && typeof line.args === 'object' ? line.args : {},
          actor: String(line.actor),
          ...(outcome && Number.isSafeInteger(outcome.exit_code)
            ? {
                exit_code: outcome.exit_code,
                duration_ms: Number(outcome.duration_ms) || 0,
                ...(outcome.result && typeof outcome.result === 'object' ? { result: outcome.result } : {}),
              }
            : { exit_code: EXIT_CODES.internal, duration_ms: 0, result: { error: INTERRUPTED } }),
          ...(Array.isArray(line.warnings) ? { warnings: line.warnings.map(String) } : {}),
        };
        const entry = await this.append(record, line.id, {
          intent_at: line.at,
          at: new Date(this.clock.now()).toISOString(),
          outcome_recorded: outcome !== undefined,
        });
        recorded.add(line.id);
        recovered.push({ id: entry.id, command: record.command, intent: line.id, outcome_recorded: outcome !== undefined });
      }
      await this.compactJournal(recorded);
      return recovered;
    });
  }

  /** Rewrites the journal without the runs that have their record. */
  private async compactJournal(recorded: Set<string>): Promise<void> {
    const release = await acquireFileLock(`${this.path}.lock`, { timeoutMs: this.lockTimeoutMs });
    try {
      const lines = await this.readJournal();
      const open = new Set(lines.filter((line) => line.type === 'intent' && !recorded.has(line.id)).map((line) => line.id));
      // An outcome whose intent is gone (recorded, or a line torn by a crash) has nothing left to complete.
      const keep = lines.filter((line) => open.has(line.id));
      const file = join(this.repoRoot, SUBCOMMAND_INTENT_PATH);
      if (keep.length === 0) {
        await rm(file, { force: true });
        return;
      }
      await writeConfinedFile(this.repoRoot, SUBCOMMAND_INTENT_PATH, keep.map((line) => `${JSON.stringify(line)}\n`).join(''), {
        field: 'audit_journal',
      });
    } finally {
      await release();
    }
  }

  /**
   * Verifies the whole file against this repository's origin, and lists the records a later start
   * appended for runs that left only their intent (`recovered`): the chain is intact, but those
   * runs were cut off or their record came late, and deserve a look.
   */
  async verify(): Promise<SubcommandLogVerification> {
    const result = await verifyFile(this.path, { origin: this.origin });
    const recovered: RecoveredRecord[] = [];
    for await (const entry of this.store.read()) {
      const flag = (entry.result as { recovered?: { outcome_recorded?: unknown } } | undefined)?.recovered;
      if (flag && typeof entry.intent === 'string') {
        recovered.push({
          id: entry.id,
          command: String(entry.command),
          intent: entry.intent,
          outcome_recorded: flag.outcome_recorded === true,
        });
      }
    }
    return { ...result, recovered };
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

  /** Retries records still pending (see {@link finish}), then closes; what still fails stays in the journal. */
  async close(): Promise<void> {
    await this.retryPending().catch(() => undefined);
    await this.store.close();
  }
}
