/**
 * @module signInSessions
 * Device sign-ins in progress, for the sign-in page (`/v0/oauth/{flow}`) and
 * `switchyard login`: start one, show its prompt, poll its state, cancel
 * it. Each session polls the authorization server in the background and,
 * on success, hands the tokens to the manager to store. Session ids are
 * 128 random bits, since a page polls by them. Finished sessions are
 * forgotten after ten minutes.
 */
import { randomBytes } from 'node:crypto';
import type { Scheduler } from '@switchyard/core-routing';
import { EventEmitter } from 'eventemitter3';
import type { CredentialStatusRecord } from '../credential.js';
import { CredentialsError } from '../errors.js';
import type { AuthFlow, AuthFlowContext, DeviceCodePrompt, SignedIn } from './authFlow.js';

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
}

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
}

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
  private closed = false;

  constructor(options: SignInSessionsOptions) {
    this.options = options;
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
    const done = started
      .complete(controller.signal)
      .then((signedIn) => this.options.save(flow, signedIn, meta))
      .then(
        (record) => {
          this.finish(session, 'succeeded', { credential_id: record.id });
          return record;
        },
        (error: unknown) => {
          const cancelled = controller.signal.aborted;
          const code = error instanceof CredentialsError ? error.code : 'authorization_failed';
          const message = error instanceof CredentialsError ? error.message : 'the sign-in failed';
          this.finish(session, cancelled ? 'cancelled' : 'failed', { error: { code: cancelled ? 'aborted' : code, message } });
          throw error;
        },
      );
    done.catch(() => undefined);
    this.entries.set(session.id, { session, controller, done });
    this.events.emit('signin:start', { ...session });
    return { ...session };
  }

  /** A session's current state. */
  get(sessionId: string): SignInSession {
    return { ...this.entry(sessionId).session };
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

  /** Cancels every pending sign-in. */
  close(): void {
    this.closed = true;
    for (const entry of this.entries.values()) if (entry.session.state === 'pending') entry.controller.abort();
  }

  private entry(sessionId: string): Entry {
    const entry = this.entries.get(sessionId);
    if (!entry)
      throw new CredentialsError('invalid_argument', 'no sign-in session has this id (it may have finished more than ten minutes ago)', {
        field: 'session',
      });
    return entry;
  }

  private finish(session: SignInSession, state: SignInState, fields: Partial<SignInSession>): void {
    Object.assign(session, fields, { state, finished_at: new Date(this.options.scheduler.now()).toISOString() });
    this.events.emit('signin:end', { ...session });
    this.options.scheduler.setTimeout(() => this.entries.delete(session.id), this.options.retentionMs ?? 10 * 60_000);
  }
}
