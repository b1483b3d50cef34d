/**
 * @module credentialWriter
 * Every change the manager makes to stored credentials: management edits,
 * runtime upserts, completed sign-ins, refreshed tokens and the statuses
 * the pools decide. Each is a read-modify-write under the credential's
 * lock, conditional on the revision it read, so concurrent writers (another
 * process editing `auths/`, another node) are never silently overwritten.
 * A stored change is then swapped into the pools.
 */
import { randomBytes } from 'node:crypto';
import type { Scheduler } from '@switchyard/runtime';
import {
  type Credential,
  type CredentialPatch,
  CredentialPatchSchema,
  type CredentialStatus,
  type NewCredential,
  NewCredentialSchema,
  parseCredential,
  parseWith,
} from '../credential.js';
import { CredentialNotFound, CredentialsError, RevisionConflict } from '../errors.js';
import type { AuthFlow, AuthFlowContext, FlowTokens, SignedIn } from '../oauth/authFlow.js';
import type { SignInMeta } from '../oauth/signInSessions.js';
import type { CredentialStore } from '../store/credentialStore.js';
import { KeyedMutex } from '../util/keyedMutex.js';

/**
 * Serializes refreshes of one credential across processes. The default
 * lock is in-process (the refresh worker's single-flight covers that);
 * the PostgreSQL adapter takes an advisory lock so that one node refreshes
 * and the others pick up its token.
 */
export interface RefreshLock {
  /** Resolves with a release function once this process holds the lock for the credential. */
  acquire(credentialId: string): Promise<() => Promise<void>>;
}

/** A {@link RefreshLock} for one process. */
export const processRefreshLock: RefreshLock = {
  acquire: async () => async () => undefined,
};

/** What the writer needs from the manager. */
export interface CredentialWriterDeps {
  store: CredentialStore;
  scheduler: Scheduler;
  /** Swaps a stored record into the pools. */
  apply(credential: Credential): void;
  /** Takes a deleted credential out of the pools. */
  removed(credentialId: string): void;
  /** The record the pools hold. */
  held(credentialId: string): Credential | undefined;
  flow(name: string): AuthFlow | undefined;
  flowContext(): AuthFlowContext;
  refreshLock: RefreshLock;
  /** Reports a write that failed in the background. */
  failed(operation: string, credentialId: string, error: unknown): void;
}

interface PendingStatus {
  status: CredentialStatus;
  message: string | null;
  revision: number;
}

/** Writes credentials for the manager. */
export class CredentialWriter {
  private readonly deps: CredentialWriterDeps;
  private readonly mutex = new KeyedMutex();
  /** Ids with a write of ours in progress: the store's notification of it is our own echo. */
  private readonly writing = new Set<string>();
  private readonly pendingStatus = new Map<string, PendingStatus>();
  private draining: Promise<void> | undefined;

  constructor(deps: CredentialWriterDeps) {
    this.deps = deps;
  }

  /** Creates a credential; its id is generated from the provider when not given. */
  async add(input: NewCredential): Promise<Credential> {
    const parsed = parseWith(NewCredentialSchema, input, 'credential');
    const id = parsed.id ?? newCredentialId(parsed.provider);
    const now = this.now();
    const { quota, ...rest } = parsed;
    const credential = parseCredential({ ...rest, id, quota: { limit: quota?.limit ?? null }, created_at: now, updated_at: now });
    return this.write(id, async () => {
      let stored: Credential;
      try {
        stored = await this.deps.store.put(credential, { expectedRevision: null });
      } catch (error) {
        if (error instanceof RevisionConflict) {
          throw new CredentialsError('credential_exists', `a credential with id ${JSON.stringify(id)} already exists`, { field: 'id' });
        }
        throw error;
      }
      this.deps.apply(stored);
      return stored;
    });
  }

  /**
   * Changes the fields an operator may change. A new token clears an
   * `error` or `expired` status (the new token is the fix); an explicit
   * `status` wins over that.
   */
  async update(id: string, patch: CredentialPatch): Promise<Credential> {
    const p = parseWith(CredentialPatchSchema, patch, 'update');
    return this.modify(id, (current) => {
      const next: Record<string, unknown> = { ...current, updated_at: this.now() };
      if (p.token !== undefined) next.token = p.token;
      if (p.refresh_token !== undefined) next.refresh_token = p.refresh_token;
      if (p.priority !== undefined) next.priority = p.priority;
      if (p.expires_at !== undefined) next.expires_at = p.expires_at ?? undefined;
      if (p.label !== undefined) next.label = p.label ?? undefined;
      if (p.quota) next.quota = { ...current.quota, limit: p.quota.limit };
      const fixesStatus =
        (p.token !== undefined || p.refresh_token !== undefined) && (current.status === 'error' || current.status === 'expired');
      if (p.status !== undefined || fixesStatus) {
        next.status = p.status ?? 'active';
        next.status_message = undefined;
      }
      return next;
    });
  }

  /** Deletes a credential. */
  async remove(id: string): Promise<void> {
    await this.write(id, async () => {
      if (!(await this.deps.store.delete(id))) throw new CredentialNotFound(id);
      this.deps.removed(id);
    });
  }

  /**
   * A runtime upsert (`{type: "auth.upsert", credential}`): creates the
   * credential, or replaces it whole, keeping its creation time.
   */
  async upsert(id: string, input: NewCredential): Promise<Credential> {
    const parsed = parseWith(NewCredentialSchema, { ...input, id }, 'credential');
    return this.write(id, async () => {
      const current = await this.deps.store.get(id);
      const now = this.now();
      const { quota, ...rest } = parsed;
      const credential = parseCredential({
        ...rest,
        id,
        quota: {
          limit: quota?.limit ?? current?.quota.limit ?? null,
          used: current?.quota.used ?? 0,
          period_start: current?.quota.period_start ?? null,
        },
        created_at: current?.created_at ?? now,
        updated_at: now,
      });
      const stored = await this.deps.store.put(credential, { expectedRevision: current?.revision ?? null });
      this.deps.apply(stored);
      return stored;
    });
  }

  /**
   * Stores a completed sign-in. Signing in again to the same account (same
   * flow, provider and label) replaces that credential's tokens instead of
   * adding a second one.
   */
  async saveSignIn(flow: AuthFlow, signedIn: SignedIn, meta: SignInMeta, existing: readonly Credential[]): Promise<Credential> {
    const provider = meta.provider ?? signedIn.provider ?? flow.provider;
    const label = meta.label ?? signedIn.label;
    const same =
      label === undefined ? undefined : existing.find((c) => c.provider === provider && c.oauth?.flow === flow.name && c.label === label);
    if (same) {
      return this.modify(same.id, (current) => ({ ...this.withTokens(current, signedIn), status: 'active', status_message: undefined }));
    }
    const now = this.now();
    const id = newCredentialId(provider);
    const credential = parseCredential({
      id,
      provider,
      type: 'oauth',
      token: signedIn.token,
      ...(signedIn.refresh_token ? { refresh_token: signedIn.refresh_token } : {}),
      ...(signedIn.expires_at ? { expires_at: signedIn.expires_at } : {}),
      priority: meta.priority ?? 0,
      ...(label ? { label } : {}),
      oauth: { flow: flow.name, params: signedIn.params ?? {}, secrets: signedIn.secrets ?? {} },
      created_at: now,
      updated_at: now,
    });
    return this.write(id, async () => {
      const stored = await this.deps.store.put(credential, { expectedRevision: null });
      this.deps.apply(stored);
      return stored;
    });
  }

  /**
   * One refresh: takes the cross-process lock, re-reads the credential
   * (if another process replaced the token meanwhile, its token is taken
   * and the refresh token is not spent twice), calls the flow, and stores
   * the new tokens. The pools keep serving the old token until then.
   */
  async refresh(id: string): Promise<void> {
    // The token this refresh is meant to replace: if the store holds another by the time the lock is ours,
    // someone else refreshed it meanwhile.
    const replacing = this.deps.held(id)?.token;
    const release = await this.deps.refreshLock.acquire(id);
    try {
      const current = await this.deps.store.get(id);
      if (!current) throw new CredentialNotFound(id);
      if (replacing !== undefined && current.token !== replacing && current.status === 'active') {
        this.deps.apply(current);
        return;
      }
      const flowName = current.oauth?.flow;
      const flow = flowName === undefined ? undefined : this.deps.flow(flowName);
      if (current.type !== 'oauth' || !flow) {
        throw new CredentialsError(
          'not_refreshable',
          current.type !== 'oauth'
            ? `credential ${JSON.stringify(id)} is an API key`
            : `no flow named ${JSON.stringify(flowName ?? '')} is registered to refresh ${JSON.stringify(id)}`,
        );
      }
      let tokens: FlowTokens;
      try {
        tokens = await flow.refresh(current, this.deps.flowContext());
      } catch (error) {
        if (error instanceof CredentialsError && error.code === 'refresh_rejected') {
          await this.modify(id, (latest) => ({ ...latest, status: 'error', status_message: error.message, updated_at: this.now() })).catch(
            () => undefined,
          );
        }
        throw error;
      }
      await this.modify(id, (latest) => ({ ...this.withTokens(latest, tokens), status: 'active', status_message: undefined }));
    } finally {
      await release();
    }
  }

  /**
   * Records a status a pool decided, to be written off the request path.
   * The write applies only if the credential is still at `revision`: a
   * newer record (a refreshed token, an operator's edit) supersedes it.
   */
  persistStatus(id: string, status: CredentialStatus, message: string | null, revision: number): void {
    this.pendingStatus.set(id, { status, message, revision });
    if (!this.draining) {
      this.draining = Promise.resolve().then(() => this.drainStatus());
    }
  }

  /** Waits until every pending status write has been tried. */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Whether a change notification for `id` may be the echo of a write of ours in progress. */
  isWriting(id: string): boolean {
    return this.writing.has(id);
  }

  /** Re-reads a credential from the store and brings the pools in line with it. */
  async sync(id: string): Promise<void> {
    const record = await this.deps.store.get(id);
    if (record) this.deps.apply(record);
    else this.deps.removed(id);
  }

  private async drainStatus(): Promise<void> {
    try {
      while (this.pendingStatus.size > 0) {
        const batch = [...this.pendingStatus];
        this.pendingStatus.clear();
        await Promise.all(
          batch.map(async ([id, pending]) => {
            try {
              await this.write(id, async () => {
                const current = await this.deps.store.get(id);
                if (!current || current.revision !== pending.revision) return;
                if (current.status === pending.status && (current.status_message ?? null) === pending.message) return;
                const next = { ...current, status: pending.status, status_message: pending.message ?? undefined, updated_at: this.now() };
                this.deps.apply(await this.deps.store.put(parseCredential(next), { expectedRevision: current.revision }));
              });
            } catch (error) {
              if (!(error instanceof RevisionConflict)) this.deps.failed('status', id, error);
            }
          }),
        );
      }
    } finally {
      this.draining = undefined;
    }
  }

  /** Runs a write of one credential under its lock, marked as ours. */
  private write<T>(id: string, task: () => Promise<T>): Promise<T> {
    return this.mutex.run(id, async () => {
      this.writing.add(id);
      try {
        return await task();
      } finally {
        this.writing.delete(id);
      }
    });
  }

  /** Read-modify-write of one credential under its lock, conditional on the revision read. */
  private modify(id: string, change: (current: Credential) => Record<string, unknown>): Promise<Credential> {
    return this.write(id, async () => {
      const current = await this.deps.store.get(id);
      if (!current) throw new CredentialNotFound(id);
      const next = parseCredential(change(current));
      const stored = await this.deps.store.put(next, { expectedRevision: current.revision });
      this.deps.apply(stored);
      return stored;
    });
  }

  private withTokens(current: Credential, tokens: FlowTokens): Record<string, unknown> {
    const oauth = current.oauth ?? { flow: '', params: {}, secrets: {} };
    return {
      ...current,
      token: tokens.token,
      refresh_token: tokens.refresh_token ?? current.refresh_token,
      expires_at: tokens.expires_at,
      oauth: { ...oauth, params: { ...oauth.params, ...tokens.params }, secrets: { ...oauth.secrets, ...tokens.secrets } },
      updated_at: this.now(),
    };
  }

  private now(): string {
    return new Date(this.deps.scheduler.now()).toISOString();
  }
}

/** A new credential id: the provider and 8 random hex digits (`openai-3f9a61c2`). */
export function newCredentialId(provider: string): string {
  return `${provider}-${randomBytes(4).toString('hex')}`;
}
