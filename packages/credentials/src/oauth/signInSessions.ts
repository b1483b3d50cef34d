/**
 * @module signInSessions
 * Device sign-ins in progress, for the sign-in page (`/v0/oauth/{flow}`) and
 * `switchyard login`: start one, show its prompt, poll its state, cancel
 * it. Each session polls the authorization server in the background and,
 * on success, hands the tokens to the manager to store. Session ids are
 * 128 random bits, since a page polls by them. Finished sessions are
 * forgotten after ten minutes.
 *
 * Each session's public status also goes to a {@link SignInDirectory}
 * (when it starts and when it ends), so that in a cluster any node can
 * answer for it and cancel it: a node asked about a sign-in it does not run
 * reads the directory; asked to cancel one, it flags it there, and the
 * owner, told by the directory's notification (or its own check every
 * `cancelCheckIntervalMs`, should one be lost), aborts the flow.
 */
import { randomBytes } from 'node:crypto';
import { every, type Scheduler } from '@switchyard/runtime';
import { EventEmitter } from 'eventemitter3';
import type { CredentialStatusRecord } from '../credential.js';
import { CredentialsError } from '../errors.js';
import type { AuthFlow, AuthFlowContext, DeviceCodePrompt, SignedIn } from './authFlow.js';
import { INTERRUPTED_ERROR, MemorySignInDirectory, publicSignInStatus, type SignInDirectory } from './signInDirectory.js';

/** Where a sign-in stands. */
export type SignInState = 'pending' | 'succeeded' | 'failed' | 'cancelled';

/** A sign-in, as the page and the CLI see it. Never carries a token. */
export interface SignInSession {
  id: string;
  flow: string;
  state: SignInState;
  prompt: DeviceCodePrompt;
  started_at: string;
  finished_at: string | null;
  /** The stored credential, once signed in. */
  credential_id: string | null;
  /** Why it failed: `access_denied`, `expired_token`, ... */
  error: { code: string; message: string } | null;
}

/** What the caller may add to the credential a sign-in creates. */
export interface SignInMeta {
  provider?: string;
  priority?: number;
  label?: string;
}

/** Events of {@link SignInSessions}. */
export interface SignInEvents {
  'signin:start': [SignInSession];
  'signin:end': [SignInSession];
}

interface Entry {
  session: SignInSession;
  controller: AbortController;
  done: Promise<CredentialStatusRecord>;
  /** The directory writes of this session, one after the other (an end never overtakes the start). */
  written: Promise<void>;
  /** Stops the owner's periodic check for a cancel request. */
  stopCheck: () => void;
}

/** The abort reason of a closing manager: its sign-ins end `failed` (`interrupted`), not cancelled by anyone. */
const SHUTDOWN = new CredentialsError('closed', INTERRUPTED_ERROR.message);

/** Options of {@link SignInSessions}. */
export interface SignInSessionsOptions {
  scheduler: Scheduler;
  flow: (name: string) => AuthFlow | undefined;
  context: (signal: AbortSignal) => AuthFlowContext;
  /** Stores a completed sign-in; returns the credential. */
  save: (flow: AuthFlow, signedIn: SignedIn, meta: SignInMeta) => Promise<CredentialStatusRecord>;
  /** Sign-ins pending at once (default 32). */
  maxPending?: number;
  /** How long finished sessions stay visible (default 10 minutes). */
  retentionMs?: number;
  /** Where the other nodes see these sign-ins, and this node theirs (default: a memory directory of its own). */
  directory?: SignInDirectory;
  /** `cluster.node_id`, the owner named in the directory (default `local`). */
  nodeId?: string;
  /** How often the owner looks for a cancel request whose notification it missed (default 5 s). */
  cancelCheckIntervalMs?: number;
  /** How long a cancel of another node's sign-in waits for that node to end it (default 5 s). */
  remoteCancelWaitMs?: number;
  /** A directory read or write failed; the sign-in itself goes on. */
  onDirectoryError?: (error: unknown) => void;
}

const REMOTE_CANCEL_POLL_MS = 50;

/**
 * Sign-ins in progress.
 *
 * @example
 * ```ts
 * const session = await manager.signIns.start('cloud-coding-assistant', { account: 'builder_id' });
 * show(session.prompt.user_code, session.prompt.verification_uri);
 * const credential = await manager.signIns.wait(session.id);
 * ```
 */
export class SignInSessions {
  readonly events = new EventEmitter<SignInEvents>();
  private readonly entries = new Map<string, Entry>();
  private readonly options: SignInSessionsOptions;
  private readonly directory: SignInDirectory;
  private readonly nodeId: string;
  private readonly retentionMs: number;
  private readonly stopListening: () => void;
  private closed = false;

  constructor(options: SignInSessionsOptions) {
    this.options = options;
    this.directory = options.directory ?? new MemorySignInDirectory();
    this.nodeId = options.nodeId ?? 'local';
    this.retentionMs = options.retentionMs ?? 10 * 60_000;
    this.stopListening = this.directory.onCancelRequest((id) => this.cancelIfPending(id));
  }

  /**
   * Ends the sign-ins the directory still shows as pending on this node:
   * they belonged to this node before it restarted, and nothing polls for
   * them now. Call once, before serving. Answers how many there were.
   */
  async recover(): Promise<number> {
    const now = this.options.scheduler.now();
    try {
      return await this.directory.interrupt(this.nodeId, new Date(now).toISOString(), new Date(now + this.retentionMs).toISOString());
    } catch (error) {
      this.options.onDirectoryError?.(error);
      return 0;
    }
  }

  /**
   * Starts a sign-in with `flowName`. Resolves once the prompt (user code,
   * verification URI) is known; the rest happens in the background.
   */
  async start(flowName: string, options: Record<string, unknown> = {}, meta: SignInMeta = {}): Promise<SignInSession> {
    if (this.closed) throw new CredentialsError('closed', 'the credential manager is closed');
    const flow = this.options.flow(flowName);
    if (!flow) throw new CredentialsError('flow_not_found', `no sign-in flow is named ${JSON.stringify(flowName)}`, { field: 'flow' });
    const pending = [...this.entries.values()].filter((e) => e.session.state === 'pending').length;
    if (pending >= (this.options.maxPending ?? 32)) {
      throw new CredentialsError('too_many_pending', 'too many sign-ins are pending; finish or cancel one first');
    }
    const controller = new AbortController();
    const context = this.options.context(controller.signal);
    const started = await flow.start(options, context);
    const session: SignInSession = {
      id: randomBytes(16).toString('base64url'),
      flow: flow.name,
      state: 'pending',
      prompt: started.prompt,
      started_at: new Date(this.options.scheduler.now()).toISOString(),
      finished_at: null,
      credential_id: null,
      error: null,
    };
    try {
      await this.directory.put(this.record(session));
    } catch (error) {
      // Other nodes could not answer for it: refuse now rather than start a sign-in half the cluster cannot see.
      controller.abort();
      throw new CredentialsError('store_failed', `cannot record the sign-in: ${(error as Error).message}`, { cause: error });
    }
    if (this.closed) {
      // Closed while the record was written: nothing would stop this sign-in; the next start marks the record interrupted.
      controller.abort(SHUTDOWN);
      throw new CredentialsError('closed', 'the credential manager is closed');
    }
    const done = started
      .complete(controller.signal)
      .then((signedIn) => this.options.save(flow, signedIn, meta))
      .then(
        (record) => {
          this.finish(session, 'succeeded', { credential_id: record.id });
          return record;
        },
        (error: unknown) => {
          if (controller.signal.reason === SHUTDOWN) {
            this.finish(session, 'failed', { error: { ...INTERRUPTED_ERROR } });
            throw error;
          }
          const cancelled = controller.signal.aborted;
          const code = error instanceof CredentialsError ? error.code : 'authorization_failed';
          const message = error instanceof CredentialsError ? error.message : 'the sign-in failed';
          this.finish(session, cancelled ? 'cancelled' : 'failed', { error: { code: cancelled ? 'aborted' : code, message } });
          throw error;
        },
      );
    done.catch(() => undefined);
    const stopCheck = every(this.options.scheduler, this.options.cancelCheckIntervalMs ?? 5_000, () => this.checkCancelRequest(session.id));
    this.entries.set(session.id, { session, controller, done, written: Promise.resolve(), stopCheck });
    this.events.emit('signin:start', { ...session });
    return { ...session };
  }

  /** A session's current state. */
  get(sessionId: string): SignInSession {
    return { ...this.entry(sessionId).session };
  }

  /**
   * A session's current state, from this node or, when another node runs
   * it, from the directory.
   */
  async status(sessionId: string): Promise<SignInSession> {
    const local = this.entries.get(sessionId);
    if (local) return { ...local.session };
    const now = this.options.scheduler.now();
    const record = await this.directory.get(sessionId, now);
    if (!record) throw notFound();
    return expiredIfOverdue(publicSignInStatus(record), now);
  }

  /**
   * Cancels a sign-in wherever it runs and answers how it stands then. One
   * of this node's ends at once; another node's is flagged in the directory
   * for its owner, and the answer waits up to `remoteCancelWaitMs` for the
   * owner to end it (it may still say `pending` after that, if the owner is
   * slow or gone). A finished sign-in is left as it ended.
   */
  async cancelAnywhere(sessionId: string): Promise<SignInSession> {
    const local = this.entries.get(sessionId);
    if (local) {
      this.cancel(sessionId);
      await local.done.catch(() => undefined);
      return { ...local.session };
    }
    const { scheduler } = this.options;
    let record = await this.directory.requestCancel(sessionId, scheduler.now());
    if (!record) throw notFound();
    const deadline = scheduler.now() + (this.options.remoteCancelWaitMs ?? 5_000);
    while (record.state === 'pending' && scheduler.now() < deadline) {
      await new Promise<void>((resolve) => scheduler.setTimeout(resolve, REMOTE_CANCEL_POLL_MS));
      record = (await this.directory.get(sessionId, scheduler.now())) ?? record;
    }
    return publicSignInStatus(record);
  }

  /** Sessions, newest first. */
  list(): SignInSession[] {
    return [...this.entries.values()].map((e) => ({ ...e.session })).reverse();
  }

  /** Resolves with the stored credential when the sign-in succeeds; rejects with why it did not. */
  wait(sessionId: string): Promise<CredentialStatusRecord> {
    return this.entry(sessionId).done;
  }

  /** Stops polling; the session ends `cancelled`. */
  cancel(sessionId: string): void {
    const entry = this.entry(sessionId);
    if (entry.session.state === 'pending') entry.controller.abort(new CredentialsError('aborted', 'the sign-in was cancelled'));
  }

  /**
   * Stops every pending sign-in; they end `failed` with code
   * `interrupted`, and the directory says so once this resolves.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.stopListening();
    const entries = [...this.entries.values()];
    for (const entry of entries) if (entry.session.state === 'pending') entry.controller.abort(SHUTDOWN);
    await Promise.all(entries.map((entry) => entry.done.catch(() => undefined).then(() => entry.written)));
  }

  private entry(sessionId: string): Entry {
    const entry = this.entries.get(sessionId);
    if (!entry) throw notFound();
    return entry;
  }

  private cancelIfPending(sessionId: string): void {
    if (this.entries.get(sessionId)?.session.state === 'pending') this.cancel(sessionId);
  }

  /** The owner's fallback for a lost cancel notification. */
  private async checkCancelRequest(sessionId: string): Promise<void> {
    try {
      const record = await this.directory.get(sessionId, this.options.scheduler.now());
      if (record?.cancel_requested) this.cancelIfPending(sessionId);
    } catch (error) {
      this.options.onDirectoryError?.(error);
    }
  }

  /** The directory's record of a session: shown until ten minutes after it ends (or, pending, after its code expires). */
  private record(session: SignInSession) {
    const shownFrom = session.finished_at ?? session.prompt.expires_at;
    const forgetAt = new Date(Date.parse(shownFrom) + this.retentionMs).toISOString();
    return { ...publicSignInStatus(session), node_id: this.nodeId, forget_at: forgetAt };
  }

  private finish(session: SignInSession, state: SignInState, fields: Partial<SignInSession>): void {
    Object.assign(session, fields, { state, finished_at: new Date(this.options.scheduler.now()).toISOString() });
    this.events.emit('signin:end', { ...session });
    const entry = this.entries.get(session.id);
    if (entry) {
      entry.stopCheck();
      const record = this.record(session);
      const now = this.options.scheduler.now();
      entry.written = entry.written
        .then(() => this.directory.put(record))
        .then(() => this.directory.prune(now))
        .catch((error: unknown) => this.options.onDirectoryError?.(error));
    }
    this.options.scheduler.setTimeout(() => this.entries.delete(session.id), this.retentionMs);
  }
}

function notFound(): CredentialsError {
  return new CredentialsError('invalid_argument', 'no sign-in session has this id (it may have finished more than ten minutes ago)', {
    field: 'session',
  });
}

/**
 * Another node's sign-in still recorded as pending after its device code expired: its owner
 * would have ended it by now, so it is gone (crashed, and not back with the same node id). The
 * code cannot be used any more, whatever the owner does, so the answer is that it expired.
 */
function expiredIfOverdue(session: SignInSession, now: number): SignInSession {
  const expiresAt = Date.parse(session.prompt.expires_at);
  if (session.state !== 'pending' || !(expiresAt <= now)) return session;
  return {
    ...session,
    state: 'failed',
    finished_at: session.prompt.expires_at,
    error: {
      code: 'expired_token',
      message: 'the device code expired before the sign-in finished (the node running it stopped answering)',
    },
  };
}
