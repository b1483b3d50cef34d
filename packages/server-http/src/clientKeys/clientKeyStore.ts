/**
 * @module clientKeyStore
 * The ports behind runtime client keys, apart from the credentials (the
 * specification counts the files in `auths/` as credentials, and
 * `auth_index` numbers them): `ClientKeyStore` keeps the keys, and
 * `BudgetLedger` counts each budget's use per period. One gateway keeps
 * both in `auth-dir/.client-keys.json` (`FileClientKeyStore`); a cluster
 * keeps them in PostgreSQL (`PostgresClientKeyStore`), whose ledger admits
 * against the shared total so a budget holds across nodes. The memory
 * adapters here serve tests and embedders.
 */
import type { ClientKeyRecord } from './clientKeyRecord.js';

/**
 * Where client keys live. Writes are whole records; `watch` tells of records other writers changed
 * (another node), so every node's guard holds the same keys.
 *
 * @example
 * ```ts
 * const store = new MemoryClientKeyStore();
 * await store.put(record);
 * console.log((await store.load()).length);
 * ```
 */
export interface ClientKeyStore {
  load(): Promise<ClientKeyRecord[]>;
  /** Creates or replaces one record; resolves once it is durable. */
  put(record: ClientKeyRecord): Promise<void>;
  /** Records changed by other writers; absent where this process is the only writer. */
  watch?(listener: (record: ClientKeyRecord) => void): () => void;
  /** Keeps when keys were last used (batched by the guard: a request never waits on it). */
  recordLastUsed(lastUsed: ReadonlyMap<string, string>): Promise<void>;
  close(): Promise<void>;
}

/** A budget's use in one period. */
export interface BudgetUse {
  /** The period it counts (`2026-11-28`, `2026-11`). */
  period: string;
  /** Units used (cost in millionths), settled requests only. */
  used: number;
}

/** One admission against a budget: `units` held as an estimate until the request settles. */
export interface BudgetReservation {
  keyId: string;
  reservation: string;
  period: string;
  units: number;
  limit: number;
}

/** Whether the reservation was admitted, and the period's use as the ledger saw it. */
export interface BudgetAnswer {
  admitted: boolean;
  used: number;
}

/**
 * Counts budget use per key and period. `reserve` admits while use plus open reservations stay below the
 * limit (the same rule as the credentials' quota reservations); `settle` replaces a reservation with what
 * the request used. A local ledger answers synchronously; a shared one returns promises, and the guard
 * awaits only then.
 *
 * @example
 * ```ts
 * const answer = await ledger.reserve({ keyId, reservation: requestId, period: '2026-11', units: 1, limit: 100 });
 * if (answer.admitted) ledger.settle(reservationOf(answer), 42);
 * ```
 */
export interface BudgetLedger {
  /** True for a ledger in this process: it needs no reservation ids (requests then carry an empty one). */
  readonly local?: boolean;
  reserve(request: BudgetReservation): BudgetAnswer | Promise<BudgetAnswer>;
  /** Ends a reservation with the units the request used (0 when it used none); errors are the ledger's to report. */
  settle(request: BudgetReservation, used: number): void;
  /** The use this process knows of (`period` other than the stored one: 0). */
  used(keyId: string, period: string): number;
}

/** A key's use as the local ledger holds it: with open reservations, and the start of its JSON text once written. */
interface LedgerEntry extends BudgetUse {
  reserved: number;
  /** `"<key id>":{"period":…,"used":` (the period of an entry never changes: a new period is a new entry). */
  head: string | undefined;
  /** False once another entry replaced it (a later period, or a restore): a reservation's kept entry is then looked up again. */
  live: boolean;
}

/** Where the local ledger keeps, on a reservation, the entry it counts in. */
const ENTRY = Symbol('ledger entry');

/** A reservation as the local ledger sees it: with the entry it was last counted in. */
interface KeptReservation extends BudgetReservation {
  [ENTRY]?: LedgerEntry;
}

/** A ledger in this process's memory: exact for one process; `snapshot`/`restore` carry it over restarts. */
export class LocalBudgetLedger implements BudgetLedger {
  readonly local = true;
  private readonly uses = new Map<string, LedgerEntry>();
  /** Bumped on each change, so a persister writes only when something changed. */
  version = 0;

  reserve(request: BudgetReservation): BudgetAnswer {
    const use = this.entryOf(request) ?? this.keep(request, this.current(request.keyId, request.period));
    if (use.used + use.reserved >= request.limit) return { admitted: false, used: use.used };
    use.reserved += request.units;
    return { admitted: true, used: use.used };
  }

  settle(request: BudgetReservation, used: number): void {
    let use = this.entryOf(request);
    if (use === undefined) {
      const known = this.uses.get(request.keyId);
      // Admitted in a period that has ended since (a request that ran across midnight): its reservation and its
      // use belonged to that period, which is over; they must not count against the new one.
      if (known !== undefined && known.period > request.period) return;
      use = this.keep(request, this.current(request.keyId, request.period, known));
    }
    use.reserved = Math.max(0, use.reserved - request.units);
    use.used += used;
    this.version++;
  }

  /**
   * The entry `request` was counted in, while it is still the key's entry for the request's period. The guard
   * gives every request of a key in one period the same reservation object, so a request's budget costs no
   * lookup in a Map of every key (with 10,000 keys in use, two of those were about 1% of a request's CPU).
   */
  private entryOf(request: BudgetReservation): LedgerEntry | undefined {
    const kept = (request as KeptReservation)[ENTRY];
    return kept?.live && kept.period === request.period ? kept : undefined;
  }

  private keep(request: BudgetReservation, use: LedgerEntry): LedgerEntry {
    (request as KeptReservation)[ENTRY] = use;
    return use;
  }

  used(keyId: string, period: string): number {
    const use = this.uses.get(keyId);
    return use && use.period === period ? use.used : 0;
  }

  /** Every key's settled use, for the store. */
  snapshot(): Record<string, BudgetUse> {
    const out: Record<string, BudgetUse> = {};
    for (const [keyId, use] of this.uses) out[keyId] = { period: use.period, used: use.used };
    return out;
  }

  /**
   * {@link snapshot} as JSON text (`{"<key id>":{"period":…,"used":…},…}`), the same as `JSON.stringify(snapshot())`.
   * With 10,000 keys the budget file is written at every flush: each entry keeps the quoted text of its key and
   * period, so a snapshot is one concatenation per key rather than an object per key and a walk to stringify them.
   */
  snapshotJson(): string {
    const parts: string[] = [];
    for (const [keyId, use] of this.uses) {
      use.head ??= `${JSON.stringify(keyId)}:{"period":${JSON.stringify(use.period)},"used":`;
      parts.push(`${use.head}${JSON.stringify(use.used)}}`);
    }
    return `{${parts.join(',')}}`;
  }

  /** Takes stored use; of two counts of one key, the later period's wins, and of one period the larger (use only grows). */
  restore(uses: Record<string, BudgetUse>): void {
    for (const [keyId, use] of Object.entries(uses)) {
      const known = this.uses.get(keyId);
      if (known && (known.period > use.period || (known.period === use.period && known.used >= use.used))) continue;
      if (known) known.live = false;
      this.uses.set(keyId, { period: use.period, used: use.used, reserved: 0, head: undefined, live: true });
    }
  }

  /** The entry of `keyId` in `period`, started when the key has none or an older one's; `known`: the entry already looked up. */
  private current(keyId: string, period: string, known: LedgerEntry | undefined = this.uses.get(keyId)): LedgerEntry {
    let use = known;
    // A later period starts over; reservations of the old one settle into nothing.
    if (use === undefined || use.period < period) {
      if (use) use.live = false;
      use = { period, used: 0, reserved: 0, head: undefined, live: true };
      this.uses.set(keyId, use);
    }
    return use;
  }
}

/**
 * Client keys in memory: tests and embedders.
 *
 * @example
 * ```ts
 * const guard = await ClientKeyGuard.open({ store: new MemoryClientKeyStore(), clock });
 * ```
 */
export class MemoryClientKeyStore implements ClientKeyStore {
  readonly records = new Map<string, ClientKeyRecord>();
  readonly lastUsed = new Map<string, string>();

  async load(): Promise<ClientKeyRecord[]> {
    return [...this.records.values()].map((record) => ({ ...record, last_used_at: this.lastUsed.get(record.id) ?? record.last_used_at }));
  }

  async put(record: ClientKeyRecord): Promise<void> {
    this.records.set(record.id, { ...record });
  }

  async recordLastUsed(lastUsed: ReadonlyMap<string, string>): Promise<void> {
    for (const [id, at] of lastUsed) this.lastUsed.set(id, at);
  }

  async close(): Promise<void> {}
}
