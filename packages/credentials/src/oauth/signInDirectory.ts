/**
 * @module signInDirectory
 * Where every node of a cluster finds the sign-ins of the others: the node
 * running a sign-in writes its public status here when it starts and when
 * it ends, so a page whose poll reaches another node behind a load balancer
 * still gets an answer, a cancel sent to another node reaches the owner (a
 * flag on the record, and a notification), and a node that restarts can
 * say that the sign-ins it was running were interrupted.
 *
 * A record only ever holds what the sign-in page shows anyway (the user
 * code, the verification URI, times, the credential id, an error): never
 * the device code, a token or a client secret. {@link publicSignInStatus}
 * copies those fields one by one, so a field added to a session later is
 * not written until someone adds it here on purpose.
 *
 * {@link MemorySignInDirectory} is the default, for one process (a restart
 * forgets it with everything else); `FileSignInDirectory` keeps one
 * gateway's sign-ins across its restarts (`openCredentials` puts it in
 * `auth-dir/.sign-ins`); `PostgresSignInDirectory` in
 * `@switchyard/credentials/postgres` is the shared one.
 */
import type { SignInSession } from './signInSessions.js';

/** A sign-in as the directory keeps it. */
export interface SignInRecord extends SignInSession {
  /** `cluster.node_id` of the node running the sign-in: only it can poll the authorization server. */
  node_id: string;
  /** Another node asked the owner to cancel this pending sign-in. */
  cancel_requested: boolean;
  /** When the record stops being shown (ISO 8601): ten minutes after the sign-in ended or its code expired. */
  forget_at: string;
}

/** What a node writes: everything but the cancel request, which only `requestCancel` sets. */
export type SignInRecordWrite = Omit<SignInRecord, 'cancel_requested'>;

/** Why a node's pending sign-ins ended when it restarted. */
export const INTERRUPTED_ERROR = {
  code: 'interrupted',
  message: 'the gateway restarted while this sign-in was pending; start a new sign-in',
} as const;

/**
 * The sign-in status directory port.
 *
 * @example
 * ```ts
 * const directory = new MemorySignInDirectory();
 * const manager = new CredentialManager({ store, signInDirectory: directory, nodeId: 'node-a' });
 * ```
 */
export interface SignInDirectory {
  /** Writes a sign-in's status (insert or replace), keeping a cancel request already made. */
  put(record: SignInRecordWrite): Promise<void>;
  /** A sign-in's record, unless there is none or its `forget_at` is at or before `now` (epoch ms). */
  get(id: string, now: number): Promise<SignInRecord | undefined>;
  /**
   * Flags a pending sign-in for cancellation and notifies the owner through
   * {@link SignInDirectory.onCancelRequest}; a finished one is left as it is.
   * Answers the record as it stands (undefined when there is none).
   */
  requestCancel(id: string, now: number): Promise<SignInRecord | undefined>;
  /** Calls `handler` with the id of every cancel request, from any node; returns the unsubscribe. */
  onCancelRequest(handler: (id: string) => void): () => void;
  /**
   * Ends the pending sign-ins of `nodeId` as `failed`, error
   * {@link INTERRUPTED_ERROR}, at `finishedAt`, shown until `forgetAt`: the
   * node restarted, and nothing polls for them any more. Answers how many.
   */
  interrupt(nodeId: string, finishedAt: string, forgetAt: string): Promise<number>;
  /** Removes the records whose `forget_at` is at or before `now` (epoch ms). */
  prune(now: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The fields of a session the directory may hold, copied one by one.
 *
 * @example
 * ```ts
 * await directory.put({ ...publicSignInStatus(session), node_id: 'node-a', forget_at });
 * ```
 */
export function publicSignInStatus(session: SignInSession): SignInSession {
  const { prompt, error } = session;
  return {
    id: session.id,
    flow: session.flow,
    state: session.state,
    prompt: {
      user_code: prompt.user_code,
      verification_uri: prompt.verification_uri,
      verification_uri_complete: prompt.verification_uri_complete,
      expires_at: prompt.expires_at,
      interval_ms: prompt.interval_ms,
    },
    started_at: session.started_at,
    finished_at: session.finished_at,
    credential_id: session.credential_id,
    error: error ? { code: error.code, message: error.message } : null,
  };
}

const copy = (record: SignInRecord): SignInRecord => ({
  ...record,
  prompt: { ...record.prompt },
  error: record.error && { ...record.error },
});

/**
 * The directory of one process, and the default. Several
 * `SignInSessions` may share one to play the nodes of a cluster in tests.
 *
 * @example
 * ```ts
 * const shared = new MemorySignInDirectory();
 * const nodeA = new CredentialManager({ store, signInDirectory: shared, nodeId: 'a' });
 * const nodeB = new CredentialManager({ store, signInDirectory: shared, nodeId: 'b' });
 * ```
 */
export class MemorySignInDirectory implements SignInDirectory {
  private readonly records = new Map<string, SignInRecord>();
  private readonly handlers = new Set<(id: string) => void>();

  async put(record: SignInRecordWrite): Promise<void> {
    const cancelRequested = this.records.get(record.id)?.cancel_requested ?? false;
    this.records.set(record.id, copy({ ...record, cancel_requested: cancelRequested }));
  }

  async get(id: string, now: number): Promise<SignInRecord | undefined> {
    const record = this.records.get(id);
    return record && Date.parse(record.forget_at) > now ? copy(record) : undefined;
  }

  async requestCancel(id: string, now: number): Promise<SignInRecord | undefined> {
    const record = this.records.get(id);
    if (!record || Date.parse(record.forget_at) <= now) return undefined;
    if (record.state === 'pending') {
      record.cancel_requested = true;
      for (const handler of [...this.handlers]) handler(id);
    }
    return copy(record);
  }

  onCancelRequest(handler: (id: string) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  async interrupt(nodeId: string, finishedAt: string, forgetAt: string): Promise<number> {
    let count = 0;
    for (const record of this.records.values()) {
      if (record.node_id !== nodeId || record.state !== 'pending') continue;
      Object.assign(record, { state: 'failed', finished_at: finishedAt, forget_at: forgetAt, error: { ...INTERRUPTED_ERROR } });
      count++;
    }
    return count;
  }

  async prune(now: number): Promise<void> {
    for (const [id, record] of this.records) if (Date.parse(record.forget_at) <= now) this.records.delete(id);
  }

  async close(): Promise<void> {
    this.handlers.clear();
  }
}
