import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { parseCredential } from '../credential.js';
import { MemoryQuotaStore, type QuotaDelta, type QuotaReservationAnswer, type QuotaReservationRequest } from '../store/quotaStore.js';
import { CredentialPool } from './credentialPool.js';
import { QuotaTracker, type QuotaTrackerOptions } from './quotaTracker.js';

const T0 = Date.parse('2026-03-10T12:00:00.000Z');

/** A memory store with the PostgreSQL store's admission rule: refuse once used + held reaches the limit. */
class ReservingStore extends MemoryQuotaStore {
  readonly held = new Map<string, { id: string; tokens: number }>();
  reserveCalls: QuotaReservationRequest[] = [];
  adds: QuotaDelta[][] = [];
  failReserve = false;
  /** The next reservation is recorded, then its answer is lost (the connection dropped after the commit). */
  loseAnswer = false;
  failAdd = 0;
  failAbandon = 0;
  abandonCalls: QuotaReservationRequest[][] = [];

  async reserve(request: QuotaReservationRequest): Promise<QuotaReservationAnswer> {
    this.reserveCalls.push(request);
    if (this.failReserve) throw new Error('database is down');
    const stored = this.usage.get(request.id);
    const used = stored && stored.period_start === request.period_start ? stored.used : 0;
    const reserved = this.heldFor(request.id);
    if (used + reserved >= request.limit) return { admitted: false, used, reserved };
    this.held.set(request.reservation, { id: request.id, tokens: request.tokens });
    if (this.loseAnswer) {
      this.loseAnswer = false;
      throw new Error('Connection terminated unexpectedly');
    }
    return { admitted: true, used, reserved: reserved + request.tokens };
  }

  async abandon(requests: readonly QuotaReservationRequest[]): Promise<void> {
    this.abandonCalls.push([...requests]);
    if (this.failAbandon > 0) {
      this.failAbandon--;
      throw new Error('database is down');
    }
    for (const request of requests) this.held.delete(request.reservation);
  }

  override async add(deltas: readonly QuotaDelta[]) {
    this.adds.push(deltas.map((d) => ({ ...d })));
    if (this.failAdd > 0) {
      this.failAdd--;
      throw new Error('database is down');
    }
    for (const delta of deltas) for (const reservation of delta.reservations ?? []) this.held.delete(reservation);
    return super.add(deltas);
  }

  heldFor(id: string): number {
    let sum = 0;
    for (const r of this.held.values()) if (r.id === id) sum += r.tokens;
    return sum;
  }
}

/** A tracker on a fake clock counting credential `k` (limit 1000) into `store`. */
function trackingK(store: ReservingStore, options: Omit<QuotaTrackerOptions, 'store' | 'scheduler'>) {
  const clock = new FakeScheduler(T0);
  const tracker = new QuotaTracker({ store, scheduler: clock, ...options });
  tracker.start();
  tracker.track('k', 'p', 1000);
  return { clock, tracker };
}

function setup(store = new ReservingStore(), flushIntervalMs = 0) {
  const clock = new FakeScheduler(T0);
  const tracker = new QuotaTracker({ store, scheduler: clock, scheduleOf: () => 'daily', flushIntervalMs });
  tracker.start();
  return { clock, store, tracker };
}

describe('QuotaTracker admission (a store that can reserve)', () => {
  test('nothing is held for a credential without a limit, or on a store that cannot reserve', () => {
    const { tracker } = setup();
    tracker.track('free', 'p', null);
    assert.equal(tracker.admit('free'), undefined);
    assert.equal(tracker.admit('unknown'), undefined);
    const plain = new QuotaTracker({ store: new MemoryQuotaStore(), scheduler: new FakeScheduler(T0) });
    plain.track('k', 'p', 100);
    assert.equal(plain.admit('k'), undefined);
  });

  test("an admission holds this node's recent tokens per request; the usage that settles it lets it go in the same write", async () => {
    const { clock, store, tracker } = setup();
    tracker.track('k', 'p', 1000);
    const first = await tracker.admit('k')!;
    assert.ok(first.admitted && first.reservation);
    assert.equal(store.reserveCalls[0]!.tokens, 0, 'nothing seen yet: the first request holds a place, no tokens');
    assert.equal(store.reserveCalls[0]!.period_start, '2026-03-10T00:00:00.000Z');
    tracker.record('k', 100, first.reservation);
    await clock.advance(0);
    await tracker.flush();
    assert.deepEqual(store.adds.at(-1), [
      { id: 'k', tokens: 100, period_start: '2026-03-10T00:00:00.000Z', reservations: [first.reservation] },
    ]);
    assert.equal(store.held.size, 0);
    const second = await tracker.admit('k')!;
    assert.equal(store.reserveCalls[1]!.tokens, 100, 'the next holds what requests have been using');
    const bigger = await tracker.admit('k', 250)!;
    assert.equal(store.reserveCalls[2]!.tokens, 250, "or the caller's estimate of this request, when that is more");
    tracker.release('k', bigger.admitted ? bigger.reservation! : '');
    assert.ok(second.admitted);
    // Settling twice (success, then the relay's safety release) lets it go once.
    tracker.record('k', 50, second.reservation);
    tracker.release('k', second.reservation!);
    await tracker.flush();
    assert.deepEqual(store.adds.at(-1)![0]!.reservations, [bigger.admitted && bigger.reservation, second.reservation]);
    assert.equal(tracker.snapshot('k').used, 150);
  });

  test('a request that used nothing lets its reservation go with a write of no tokens', async () => {
    const { store, tracker } = setup();
    tracker.track('k', 'p', 1000);
    const admission = await tracker.admit('k')!;
    assert.ok(admission.admitted);
    tracker.release('k', admission.reservation!);
    await tracker.flush();
    assert.deepEqual(store.adds.at(-1), [
      { id: 'k', tokens: 0, period_start: '2026-03-10T00:00:00.000Z', reservations: [admission.reservation] },
    ]);
    assert.equal(store.held.size, 0);
  });

  test('refused when the limit is held by requests in flight elsewhere; the refusal brings the committed use', async () => {
    const { store, tracker } = setup();
    tracker.track('k', 'p', 100);
    await store.add([{ id: 'k', tokens: 60, period_start: '2026-03-10T00:00:00.000Z' }]);
    store.held.set('elsewhere', { id: 'k', tokens: 40 });
    const refused = await tracker.admit('k')!;
    assert.deepEqual(refused, { admitted: false, used: 60, reserved: 40, limit: 100 });
    assert.equal(tracker.snapshot('k').used, 60, 'the other nodes\u2019 committed use is known here now');
    assert.equal(tracker.isExhausted('k'), false, 'held room comes back: not exhausted');
  });

  test("use the store reports for another period (another node's clock is ahead) is not taken as this period's", async () => {
    const { store, tracker } = setup();
    tracker.track('k', 'p', 100);
    const reserve = store.reserve.bind(store);
    store.reserve = async (request) => ({ ...(await reserve(request)), used: 99, period_start: '2026-03-11T00:00:00.000Z' });
    await tracker.admit('k');
    assert.equal(tracker.snapshot('k').used, 0);
  });

  test('a failed write keeps the releases for the next one; a store out of reach admits without holding', async () => {
    const { store, tracker } = setup();
    tracker.track('k', 'p', 1000);
    const admission = await tracker.admit('k')!;
    store.failAdd = 1;
    tracker.record('k', 10, admission.admitted ? admission.reservation : undefined);
    await tracker.flush();
    assert.equal(store.held.size, 1, 'the failed write let nothing go');
    await tracker.flush();
    assert.equal(store.held.size, 0);
    assert.equal(store.adds.at(-1)![0]!.tokens, 10);

    const failures: unknown[] = [];
    tracker.events.on('quota:reserve_failed', (e) => failures.push(e.credentialId));
    store.failReserve = true;
    assert.deepEqual(await tracker.admit('k')!, { admitted: true });
    assert.deepEqual(failures, ['k']);
    assert.equal(tracker.admit('k'), undefined, 'within the backoff nothing is asked');
    assert.deepEqual(tracker.admissionCounts(), { stalled: 0, skipped: 1 }, 'the failure itself is the store’s to count');
  });

  test('an admission whose answer is lost is abandoned at once; a failed abandon is retried with the next write until the ttl', async () => {
    const store = new ReservingStore();
    const { clock, tracker } = trackingK(store, { flushIntervalMs: 1000, reserveBackoffMs: 5000, reservationTtlMs: 60_000 });
    store.loseAnswer = true;
    assert.deepEqual(await tracker.admit('k', 50)!, { admitted: true }, 'the request goes ahead without a reservation');
    await clock.advance(0);
    assert.equal(store.heldFor('k'), 0, 'let go at once, not at the end of the flush interval');
    assert.deepEqual(store.abandonCalls, [[store.reserveCalls[0]]]);
    assert.equal(store.adds.length, 0, 'nothing else was pending');

    await clock.advance(5000);
    store.loseAnswer = true;
    store.failAbandon = 1;
    await tracker.admit('k', 50);
    await clock.advance(0);
    assert.equal(store.heldFor('k'), 50, 'the abandon failed');
    await clock.advance(1000);
    assert.equal(store.heldFor('k'), 0, 'and the next write carried it');

    await clock.advance(5000);
    store.loseAnswer = true;
    store.failAbandon = Number.POSITIVE_INFINITY;
    await tracker.admit('k', 50);
    await clock.advance(60_000);
    const calls = store.abandonCalls.length;
    assert.ok(calls >= 60, `retried at every write (${calls} calls)`);
    await clock.advance(10_000);
    assert.equal(store.abandonCalls.length, calls, 'once the ttl has passed the reservation has lapsed: nothing to abandon');
    await tracker.stop();
  });

  test('a store that stalls: the admission gives up after the timeout, and the next requests go ahead without asking for the backoff', async () => {
    const store = new ReservingStore();
    const { clock, tracker } = trackingK(store, { flushIntervalMs: 0, reserveTimeoutMs: 1000, reserveBackoffMs: 5000 });
    let answer: ((a: QuotaReservationAnswer) => void) | undefined;
    store.reserve = (request) => {
      store.reserveCalls.push(request);
      return new Promise((resolve) => {
        answer = resolve;
      });
    };
    const pending = tracker.admit('k')!;
    await clock.advance(1000);
    assert.deepEqual(await pending, { admitted: true });
    assert.deepEqual(tracker.admissionCounts(), { stalled: 1, skipped: 0 });
    assert.equal(tracker.admit('k'), undefined, 'within the backoff nothing is asked');
    assert.deepEqual(tracker.admissionCounts(), { stalled: 1, skipped: 1 });
    // No release goes out before the store answers: it could reach the database ahead of the late reservation.
    tracker.record('k', 3);
    await tracker.flush();
    assert.deepEqual(
      store.adds.flat().flatMap((d) => d.reservations ?? []),
      [],
    );
    // The stalled reservation lands after all: it is let go with the next write.
    answer!({ admitted: true, used: 0, reserved: 0 });
    await clock.advance(0);
    await tracker.flush();
    assert.deepEqual(
      store.adds.flat().flatMap((d) => d.reservations ?? []),
      [store.reserveCalls[0]!.reservation],
    );
    await clock.advance(5000);
    assert.notEqual(tracker.admit('k'), undefined, 'after the backoff the store is asked again');
    assert.equal(store.reserveCalls.length, 2);
  });

  test('an admission given up on whose late answer is a failure is abandoned then, not before', async () => {
    const store = new ReservingStore();
    const { clock, tracker } = trackingK(store, { flushIntervalMs: 0, reserveTimeoutMs: 1000 });
    let fail: ((error: Error) => void) | undefined;
    store.reserve = (request) => {
      store.reserveCalls.push(request);
      return new Promise((_, reject) => {
        fail = reject;
      });
    };
    const pending = tracker.admit('k')!;
    await clock.advance(1000);
    assert.deepEqual(await pending, { admitted: true });
    assert.deepEqual(store.abandonCalls, [], 'the store has not answered: it may still say admitted');
    fail!(new Error('Query read timeout'));
    await clock.advance(0);
    assert.deepEqual(store.abandonCalls, [[store.reserveCalls[0]]]);
    await tracker.stop();
  });

  test('a store that is slow but answering others (a burst on one row) is waited for past the timeout', async () => {
    const store = new ReservingStore();
    const { clock, tracker } = trackingK(store, { flushIntervalMs: 0, reserveTimeoutMs: 1000, reserveBackoffMs: 5000 });
    const answers: ((a: QuotaReservationAnswer) => void)[] = [];
    store.reserve = (request) => {
      store.reserveCalls.push(request);
      return new Promise((resolve) => answers.push(resolve));
    };
    const failures: unknown[] = [];
    tracker.events.on('quota:reserve_failed', (e) => failures.push(e.error));
    const first = tracker.admit('k')!;
    const second = tracker.admit('k')!;
    await clock.advance(800);
    answers[1]!({ admitted: true, used: 0, reserved: 0 }); // the other one gets through: the store is alive
    await clock.advance(700); // 1.5 s: past the timeout, but the store answered 0.7 s ago
    answers[0]!({ admitted: true, used: 0, reserved: 0 });
    const [one, two] = await Promise.all([first, second]);
    assert.ok(one.admitted && one.reservation, 'waited for, and holding a reservation');
    assert.ok(two.admitted && two.reservation);
    assert.deepEqual(failures, []);
    assert.notEqual(tracker.admit('k'), undefined, 'no backoff: nothing failed');
  });

  test('one admission that never answers gives up at three timeouts, even while others are answered', async () => {
    const store = new ReservingStore();
    const clock = new FakeScheduler(T0);
    const tracker = new QuotaTracker({ store, scheduler: clock, flushIntervalMs: 0, reserveTimeoutMs: 1000, reserveBackoffMs: 5000 });
    tracker.start();
    tracker.track('k', 'p', 1_000_000);
    const answers: ((a: QuotaReservationAnswer) => void)[] = [];
    store.reserve = (request) => {
      store.reserveCalls.push(request);
      return new Promise((resolve) => answers.push(resolve));
    };
    let outcome: unknown;
    void tracker.admit('k')!.then((a) => (outcome = a));
    // Others are answered every 500 ms: the store is alive, but this query is lost.
    for (let t = 0; t < 2500; t += 500) {
      void tracker.admit('k');
      await clock.advance(500);
      answers.at(-1)!({ admitted: true, used: 0, reserved: 0 });
      await clock.advance(0);
    }
    assert.equal(outcome, undefined, 'still waiting at 2.5 s: the store is answering others');
    await clock.advance(500);
    assert.deepEqual(outcome, { admitted: true }, 'gave up at 3 s, and went ahead without a reservation');
  });

  test('a reservation settled after its period ended is let go with the ended period\u2019s tokens', async () => {
    const { clock, store, tracker } = setup(new ReservingStore(), 24 * 3600_000);
    tracker.track('k', 'p', 1000);
    const admission = await tracker.admit('k')!;
    assert.ok(admission.admitted);
    tracker.record('k', 5, admission.reservation);
    await clock.advance(12 * 3600_000); // past midnight, before the next write
    assert.equal(tracker.snapshot('k').used, 0);
    await tracker.flush();
    const written = store.adds.flat();
    assert.deepEqual(
      written.find((d) => d.reservations?.includes(admission.reservation!)),
      { id: 'k', tokens: 5, period_start: '2026-03-10T00:00:00.000Z', reservations: [admission.reservation] },
    );
    assert.equal(store.held.size, 0);
  });

  test('the pool passes admission through and settles with reportSuccess, reportUsage or release', async () => {
    const store = new ReservingStore();
    const clock = new FakeScheduler(T0);
    const quotas = new QuotaTracker({ store, scheduler: clock, flushIntervalMs: 0 });
    quotas.start();
    const pool = new CredentialPool('p', { quotas, scheduler: clock });
    pool.upsert([
      parseCredential({
        id: 'k',
        provider: 'p',
        type: 'api_key',
        token: 'sk-test',
        created_at: new Date(T0).toISOString(),
        updated_at: new Date(T0).toISOString(),
        revision: 1,
        quota: { limit: 1000 },
      }),
    ]);
    assert.equal(pool.admit('missing'), undefined);
    const one = await pool.admit('k')!;
    const two = await pool.admit('k')!;
    const three = await pool.admit('k')!;
    assert.ok(one.admitted && two.admitted && three.admitted);
    pool.reportSuccess('k', { inputTokens: 3, outputTokens: 4 }, one.reservation);
    pool.release('k', two.reservation!);
    // A stream broken after its first byte: its tokens settle the reservation, though it was no success.
    pool.reportUsage('k', { inputTokens: 5, outputTokens: 6 }, three.reservation);
    pool.release('k', three.reservation!);
    await quotas.flush();
    assert.equal(store.held.size, 0);
    assert.equal(quotas.snapshot('k').used, 18, 'the released-after-settled reservation gives nothing back twice');
  });

  test('stop() waits for a request that holds a reservation, then writes its usage and release in one write', async () => {
    const { clock, store, tracker } = setup(new ReservingStore(), 60_000);
    tracker.track('k', 'p', 1000);
    const admission = await tracker.admit('k')!;
    assert.ok(admission.admitted && admission.reservation);
    let stopped = false;
    const stopping = tracker.stop().then(() => (stopped = true));
    await clock.advance(1000);
    assert.equal(stopped, false, 'the request is still in flight');
    tracker.record('k', 40, admission.reservation);
    await stopping;
    assert.deepEqual(store.adds.flat(), [
      { id: 'k', tokens: 40, period_start: '2026-03-10T00:00:00.000Z', reservations: [admission.reservation] },
    ]);
    assert.equal(store.held.size, 0);
  });

  test('stop() waits for an admission the store has not answered yet, since it becomes a reservation to settle', async () => {
    const { clock, store, tracker } = setup(new ReservingStore(), 60_000);
    tracker.track('k', 'p', 1000);
    let answer: ((a: QuotaReservationAnswer) => void) | undefined;
    store.reserve = (request) => {
      store.held.set(request.reservation, { id: request.id, tokens: request.tokens });
      return new Promise((resolve) => {
        answer = resolve;
      });
    };
    const admitting = tracker.admit('k')!;
    let stopped = false;
    const stopping = tracker.stop().then(() => (stopped = true));
    await clock.advance(100);
    answer!({ admitted: true, used: 0, reserved: 0 });
    const admission = await admitting;
    assert.ok(admission.admitted && admission.reservation);
    await clock.advance(100);
    assert.equal(stopped, false, 'admitted: its request is now in flight');
    tracker.release('k', admission.reservation);
    await stopping;
    assert.equal(store.held.size, 0);
  });

  test('stop() waits at most stopTimeoutMs for a request that never settles; what settles later is written at once', async () => {
    const store = new ReservingStore();
    const clock = new FakeScheduler(T0);
    const tracker = new QuotaTracker({ store, scheduler: clock, scheduleOf: () => 'daily', flushIntervalMs: 60_000, stopTimeoutMs: 2000 });
    tracker.start();
    tracker.track('k', 'p', 1000);
    const admission = await tracker.admit('k')!;
    assert.ok(admission.admitted && admission.reservation);
    tracker.record('k', 10);
    let stopped = false;
    const stopping = tracker.stop().then(() => (stopped = true));
    await clock.advance(1999);
    assert.equal(stopped, false);
    await clock.advance(1);
    await stopping;
    assert.deepEqual(store.adds.flat(), [{ id: 'k', tokens: 10, period_start: '2026-03-10T00:00:00.000Z' }], 'the rest is written');
    tracker.record('k', 30, admission.reservation);
    await clock.advance(0);
    assert.deepEqual(store.adds.at(-1), [
      { id: 'k', tokens: 30, period_start: '2026-03-10T00:00:00.000Z', reservations: [admission.reservation] },
    ]);
    assert.equal(store.held.size, 0);
  });
});
