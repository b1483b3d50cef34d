/**
 * @module clientKeyGuard
 * The data plane's check of runtime client keys, in memory: a presented
 * secret is digested once and looked up in a Map (O(1) with any number of
 * keys), and the key's limits are checked against per-key state held beside
 * it. Only a key with a budget in a cluster waits on anything (the shared
 * ledger's admission); everything else is arithmetic. Stores push changes
 * in (`apply`, `watch`), so a key revoked on any node is refused here as
 * soon as the change arrives.
 */
import { randomBytes } from 'node:crypto';
import type { ClientIdentity, RequestEndEvent } from '@switchyard/core-routing';
import { type TokenPrice, tokenCost } from '@switchyard/observability';
import { isoTimestamp } from '@switchyard/observability/logging';
import { Glob, type RelayFailure } from '@switchyard/relay';
import { type Clock, every, type Scheduler } from '@switchyard/runtime';
import {
  budgetLimitUnits,
  budgetUnitsToAmount,
  CLIENT_KEY_PREFIX,
  type ClientKeyRecord,
  type ClientKeyView,
  COST_SCALE,
  secretDigest,
} from './clientKeyRecord.js';
import type { BudgetLedger, BudgetReservation, ClientKeyStore } from './clientKeyStore.js';
import { MinuteRate, type PeriodWindow, periodAt } from './limits.js';

/** A key as the guard holds it: the record, its compiled model list and its rate state. */
export interface GuardedKey {
  record: ClientKeyRecord;
  client: ClientIdentity;
  /** The model list's exact names, shared (never changed) by every key with the same list; undefined: any model. */
  exactModels: ReadonlySet<string> | undefined;
  /** The model list's globs, compiled, shared like `exactModels`. */
  globs: readonly Glob[];
  requests: MinuteRate | undefined;
  tokens: MinuteRate | undefined;
  expiresAtMs: number;
  /** The budget period last admitted in: most requests fall in it, and need no date arithmetic. */
  period: PeriodWindow | undefined;
  /** The budget's limit in the ledger's units (cost in millionths). */
  budgetLimit: number;
  /** When this process last admitted a request of the key (ms), or NaN: kept here, not in a Map, so a request allocates nothing for it. */
  lastUsedMs: number;
  /** Whether `lastUsedMs` waits for the next flush (the key is then in the guard's list of used keys). */
  lastUsedPending: boolean;
  /**
   * The admission every request of the key gets when it needs no reservation id of its own: a key without a
   * budget, or one on a local ledger in the current period. Built once per key and period, not per request.
   */
  admission: KeyAdmission | undefined;
}

/** A refusal, in the terms the data plane formats in the client's family. */
export type KeyRefusal = RelayFailure;

/** An admitted request: who sent it, and what it holds of the key's budget until it settles. Shared between requests: never changed. */
export interface KeyAdmission {
  readonly client: ClientIdentity;
  readonly key: GuardedKey;
  readonly reservation: Readonly<BudgetReservation> | undefined;
}

/** Options of {@link ClientKeyGuard.open}. */
export interface ClientKeyGuardOptions {
  store: ClientKeyStore;
  ledger: BudgetLedger;
  clock: Clock;
  /** The price of a provider's tokens, read at each settlement (cost budgets). */
  tokenPrice?: (provider: string) => TokenPrice | undefined;
  /** Where last-used times are written from, in batches; without it they are written only by `flush`. */
  scheduler?: Scheduler;
  /** How often last-used times and local budget use are written (default 10 s). */
  flushIntervalMs?: number;
  /** Store failures of the batched writes. */
  onError?: (error: Error) => void;
}

/** A model list, compiled: what keys with the same list share. */
interface CompiledModels {
  exact: ReadonlySet<string>;
  globs: readonly Glob[];
}

/**
 * How many distinct model lists the guard keeps for sharing. Keys are mostly issued from a few templates,
 * so a handful of lists serve thousands of keys; past this many the cache starts over (keys keep what they hold).
 */
const MAX_SHARED_MODEL_LISTS = 4_096;

const NO_GLOBS: readonly Glob[] = Object.freeze([]);

/** Seconds for `Retry-After`: whole, at least 1. */
const retrySeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** Whether `key`'s model list (names and globs) lets it use `model`; a key without a list may use any. */
export function allowsModel(key: GuardedKey, model: string): boolean {
  return key.exactModels === undefined || key.exactModels.has(model) || key.globs.some((glob) => glob.test(model));
}

/** The refusal (403 `model_not_allowed`) of a request for `model` outside `key`'s list, else undefined. */
export function refuseModel(key: GuardedKey, model: string): KeyRefusal | undefined {
  if (allowsModel(key, model)) return undefined;
  return {
    status: 403,
    code: 'model_not_allowed',
    type: 'permission_error',
    message: `this API key may not use the model ${JSON.stringify(model.slice(0, 256))}`,
    param: 'model',
  };
}

/** Whether a presented key could be a runtime key at all: config keys never pay for the digest. */
export function looksLikeClientKey(key: string | undefined): key is string {
  return key?.startsWith(CLIENT_KEY_PREFIX) === true;
}

/**
 * Runtime client keys and their limits, checked in memory.
 *
 * @example
 * ```ts
 * const guard = await ClientKeyGuard.open({ store, ledger: store.ledger, clock: scheduler });
 * const key = guard.identify(presented);
 * const admission = key && (await guard.admit(key, 'gpt-4o'));
 * ```
 */
export class ClientKeyGuard {
  private readonly byDigest = new Map<string, GuardedKey>();
  private readonly byId = new Map<string, GuardedKey>();
  /**
   * Compiled model lists by their patterns. Shared rather than one Set and Glob array per key: with 10,000
   * keys that was about a third of the guard's memory, and a request's model check now reads a Set that
   * every key of its list keeps warm in the CPU's caches (docs/benchmarks.md, client keys).
   */
  private readonly modelLists = new Map<string, CompiledModels>();
  /**
   * Keys used since the last flush, each once (by `lastUsedPending`): the flush writes their `lastUsedMs`. A key
   * replaced by `apply` meanwhile is read through `byId`, since the replacement takes over the flag and the time.
   */
  private usedKeys: GuardedKey[] = [];
  /** Reservation ids: unique per process (and node) with no per-request randomness. */
  private readonly reservationPrefix = randomBytes(6).toString('hex');
  private reservations = 0;
  private stopFlush: (() => void) | undefined;
  private stopWatch: (() => void) | undefined;
  readonly store: ClientKeyStore;
  readonly ledger: BudgetLedger;
  private readonly clock: Clock;

  private constructor(private readonly options: ClientKeyGuardOptions) {
    this.store = options.store;
    this.ledger = options.ledger;
    this.clock = options.clock;
  }

  /** Loads every key from the store and follows its changes. */
  static async open(options: ClientKeyGuardOptions): Promise<ClientKeyGuard> {
    const guard = new ClientKeyGuard(options);
    for (const record of await options.store.load()) guard.apply(record);
    guard.stopWatch = options.store.watch?.((record) => guard.apply(record));
    if (options.scheduler) {
      guard.stopFlush = every(options.scheduler, options.flushIntervalMs ?? 10_000, () => guard.flush());
    }
    return guard;
  }

  /** How many keys it holds (revoked ones too). */
  get size(): number {
    return this.byId.size;
  }

  /** Takes a new or changed record (from this node's API or another node's store). */
  apply(record: ClientKeyRecord): void {
    const previous = this.byId.get(record.id);
    if (previous) this.byDigest.delete(previous.record.secret_digest);
    const models = record.models ? this.compiledModels(record.models) : undefined;
    const client: ClientIdentity = { keyId: record.id, name: record.name, tenant: record.tenant };
    const guarded: GuardedKey = {
      record,
      client,
      exactModels: models?.exact,
      globs: models?.globs ?? NO_GLOBS,
      // Rate state survives an update of the limit, so raising or lowering it forgives nothing.
      requests: rateFor(record.requests_per_minute, previous?.requests),
      tokens: rateFor(record.tokens_per_minute, previous?.tokens),
      expiresAtMs: record.expires_at === null ? Number.POSITIVE_INFINITY : Date.parse(record.expires_at),
      period: undefined,
      budgetLimit: record.budget ? budgetLimitUnits(record.budget) : 0,
      lastUsedMs: previous ? previous.lastUsedMs : Number.NaN,
      lastUsedPending: previous ? previous.lastUsedPending : false,
      admission: undefined,
    };
    if (!record.budget) guarded.admission = { client, key: guarded, reservation: undefined };
    this.byId.set(record.id, guarded);
    this.byDigest.set(record.secret_digest, guarded);
  }

  /** `patterns` compiled, shared with every key that has the same list. */
  private compiledModels(patterns: readonly string[]): CompiledModels {
    const id = JSON.stringify(patterns);
    let compiled = this.modelLists.get(id);
    if (compiled === undefined) {
      if (this.modelLists.size >= MAX_SHARED_MODEL_LISTS) this.modelLists.clear();
      const globs = patterns.filter((p) => /[*?]/.test(p)).map((p) => new Glob(p));
      compiled = { exact: new Set(patterns.filter((p) => !/[*?]/.test(p))), globs: globs.length > 0 ? globs : NO_GLOBS };
      this.modelLists.set(id, compiled);
    }
    return compiled;
  }

  /** The key whose secret is `secret`, revoked or not; undefined when none is. */
  identify(secret: string): GuardedKey | undefined {
    // A Map keyed by the SHA-256 of a 256-bit secret: the lookup's timing tells nothing about any stored secret.
    return this.byDigest.get(secretDigest(secret));
  }

  /** The record of `id`. */
  get(id: string): ClientKeyRecord | undefined {
    return this.byId.get(id)?.record;
  }

  /** Every record, oldest first. */
  records(): ClientKeyRecord[] {
    return [...this.byId.values()].map((key) => key.record).sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  /** What the API shows of a key: never its digest; its budget's use in the current period. */
  view(record: ClientKeyRecord): ClientKeyView {
    const { secret_digest: _digest, ...rest } = record;
    let budgetUse: ClientKeyView['budget_use'] = null;
    if (record.budget) {
      const period = periodAt(record.budget.period, this.clock.now());
      budgetUse = {
        used: budgetUnitsToAmount(record.budget, this.ledger.used(record.id, period.start)),
        period_start: new Date(period.startMs).toISOString(),
        resets_at: new Date(period.endMs).toISOString(),
      };
    }
    const lastUsed = this.byId.get(record.id)?.lastUsedMs ?? Number.NaN;
    const known = record.last_used_at;
    const latest = Number.isNaN(lastUsed) || (known !== null && Date.parse(known) >= lastUsed) ? known : new Date(lastUsed).toISOString();
    return { ...rest, last_used_at: latest, budget_use: budgetUse };
  }

  /**
   * The refusal a key earns before its request is read: revoked keys are unknown keys (401
   * `invalid_api_key`), expired ones `key_expired` (401).
   */
  refuseAtDoor(key: GuardedKey, now = this.clock.now()): KeyRefusal | undefined {
    if (key.record.revoked)
      return { status: 401, code: 'invalid_api_key', type: 'authentication_error', message: 'missing or invalid API key' };
    if (now >= key.expiresAtMs) {
      return {
        status: 401,
        code: 'key_expired',
        type: 'authentication_error',
        message: `this API key expired at ${key.record.expires_at}`,
      };
    }
    return undefined;
  }

  /**
   * Admits a request for `model`, or refuses it: a model outside the key's list (403 `model_not_allowed`),
   * past its request or token rate (429 `key_rate_limited`), or its budget spent (429 `key_budget_exceeded`).
   * Resolves synchronously unless the key has a budget on a shared ledger.
   */
  admit(key: GuardedKey, model: string): KeyAdmission | KeyRefusal | Promise<KeyAdmission | KeyRefusal> {
    const now = this.clock.now();
    const door = this.refuseAtDoor(key, now) ?? refuseModel(key, model);
    if (door) return door;
    const { record } = key;
    const tokenWait = key.tokens?.wait(now) ?? 0;
    if (tokenWait > 0) return rateLimited(`${record.tokens_per_minute} tokens per minute`, tokenWait);
    const requestWait = key.requests?.take(now) ?? 0;
    if (requestWait > 0) return rateLimited(`${record.requests_per_minute} requests per minute`, requestWait);
    key.lastUsedMs = now;
    if (!key.lastUsedPending) {
      key.lastUsedPending = true;
      this.usedKeys.push(key);
    }
    if (!record.budget) return key.admission!;
    let period = key.period;
    if (period === undefined || now >= period.endMs || now < period.startMs) {
      key.period = period = periodAt(record.budget.period, now);
      key.admission = undefined;
    }
    // Only a shared ledger keeps reservations by id; a local one counts them, so every request of a key in one
    // period holds the same reservation, and the admission that carries it is built once.
    let admission = this.ledger.local ? key.admission : undefined;
    if (admission === undefined) {
      const reservation: BudgetReservation = {
        keyId: record.id,
        reservation: this.ledger.local ? '' : `${this.reservationPrefix}:${++this.reservations}`,
        period: period.start,
        // The estimate held until the request settles: one request, or the smallest unit of tokens or cost.
        units: 1,
        limit: key.budgetLimit,
      };
      admission = { client: key.client, key, reservation };
      if (this.ledger.local) key.admission = admission;
    }
    const answer = this.ledger.reserve(admission.reservation!);
    if (answer instanceof Promise) return answer.then((shared) => this.budgetDecision(admission, shared.admitted, now));
    return this.budgetDecision(admission, answer.admitted, now);
  }

  private budgetDecision(admission: KeyAdmission, admitted: boolean, now: number): KeyAdmission | KeyRefusal {
    if (admitted) return admission;
    const { key } = admission;
    key.requests?.refund();
    const budget = key.record.budget!;
    const endMs = key.period!.endMs;
    return {
      status: 429,
      code: 'key_budget_exceeded',
      type: 'rate_limit_error',
      message: `this API key's ${budget.period} budget of ${budget.limit} ${budget.unit} is spent; it resets at ${new Date(endMs).toISOString()}`,
      retryAfterSeconds: retrySeconds(endMs - now),
    };
  }

  /**
   * Accounts a finished request to its key: its tokens to the token rate, and its use to the budget
   * (requests: 1; tokens: in + out; cost: at the provider's `cost_per_1k_tokens`). `end` is undefined
   * when the request ended without the relay's end event (it threw): the reservation is let go unused.
   */
  settle(admission: KeyAdmission, end: RequestEndEvent | undefined): void {
    const tokens = end ? Math.max(0, end.tokens.input) + Math.max(0, end.tokens.output) : 0;
    admission.key.tokens?.add(tokens, this.clock.now());
    const { reservation } = admission;
    const budget = admission.key.record.budget;
    if (!reservation || !budget) return;
    let used = 0;
    if (end) {
      if (budget.unit === 'requests') used = 1;
      else if (budget.unit === 'tokens') used = tokens;
      else {
        const price = end.provider === null ? undefined : this.options.tokenPrice?.(end.provider);
        used = price ? Math.round(tokenCost(end.tokens, price) * COST_SCALE) : 0;
      }
    }
    this.ledger.settle(reservation, used);
  }

  /**
   * Runs `relay` under `key`'s limits: admits the request for `model`, runs it, and settles what it used.
   * Resolves the refusal when the key may not send it (nothing ran), else undefined. No async frame of its
   * own: a local admission is synchronous, and this sits on every request of a runtime key.
   */
  run(key: GuardedKey, model: string, relay: () => Promise<RequestEndEvent>): Promise<KeyRefusal | undefined> {
    const admitted = this.admit(key, model);
    if (admitted instanceof Promise) return admitted.then((decided) => this.runAdmitted(decided, relay));
    return this.runAdmitted(admitted, relay);
  }

  private runAdmitted(admitted: KeyAdmission | KeyRefusal, relay: () => Promise<RequestEndEvent>): Promise<KeyRefusal | undefined> {
    if (!('key' in admitted)) return Promise.resolve(admitted);
    let relayed: Promise<RequestEndEvent>;
    try {
      relayed = relay();
    } catch (error) {
      this.settle(admitted, undefined);
      return Promise.reject(error);
    }
    return relayed.then(
      (end) => {
        this.settle(admitted, end);
        return undefined;
      },
      (error: unknown) => {
        // Ended without the relay's end event: the reservation is let go unused.
        this.settle(admitted, undefined);
        throw error;
      },
    );
  }

  /** Writes last-used times (and, for a local ledger, budget use) to the store. */
  async flush(): Promise<void> {
    const batch = this.usedKeys;
    this.usedKeys = [];
    const written = new Map<string, string>();
    for (const used of batch) {
      const key = this.byId.get(used.record.id) ?? used;
      key.lastUsedPending = false;
      written.set(key.record.id, isoTimestamp(key.lastUsedMs));
    }
    try {
      await this.store.recordLastUsed(written);
      // The records in force learn the times too (the view and an update read them). Changed in place: the guard's
      // records are its own (stores hand out copies), and a copy of every used record per flush was old-generation
      // garbage of 10,000 records every 10 s with 10,000 keys in use.
      for (const [id, at] of written) {
        const record = this.byId.get(id)?.record;
        if (record && (record.last_used_at === null || record.last_used_at < at)) record.last_used_at = at;
      }
    } catch (error) {
      // Kept for the next flush, with the key's latest time.
      for (const used of batch) {
        const key = this.byId.get(used.record.id) ?? used;
        if (!key.lastUsedPending) {
          key.lastUsedPending = true;
          this.usedKeys.push(key);
        }
      }
      this.options.onError?.(error as Error);
    }
  }

  /** Stops the batched writes, writes what is pending, and closes the store. */
  async close(): Promise<void> {
    this.stopFlush?.();
    this.stopWatch?.();
    await this.flush();
    await this.store.close();
  }
}

function rateFor(perMinute: number | null, previous: MinuteRate | undefined): MinuteRate | undefined {
  if (perMinute === null) return undefined;
  if (!previous) return new MinuteRate(perMinute);
  previous.setLimit(perMinute);
  return previous;
}

function rateLimited(limit: string, waitMs: number): KeyRefusal {
  return {
    status: 429,
    code: 'key_rate_limited',
    type: 'rate_limit_error',
    message: `this API key is over its limit of ${limit}; retry in ${retrySeconds(waitMs)} s`,
    retryAfterSeconds: retrySeconds(waitMs),
  };
}
