import { every, FakeScheduler, RuntimeError, withTimeout } from '@switchyard/runtime';

const start = Date.parse('2026-01-01T00:00:00Z');
const clock = new FakeScheduler(start); // time moves only when told: a minute of probes runs in milliseconds
const at = () => `+${(clock.now() - start) / 1000}s`;

// A stand-in health probe: it answers after 2 s, except the third call, which hangs.
let calls = 0;
const probe = (signal: AbortSignal) =>
  new Promise<string>((resolve) => {
    const n = ++calls;
    signal.addEventListener('abort', () => console.log(`${at()} probe ${n} aborted`));
    if (n !== 3) clock.setTimeout(() => resolve(`probe ${n} answered`), 2_000);
  });

// Every 10 s, counted from the end of the previous run, so a slow probe never overlaps the next.
const stop = every(clock, 10_000, async () => {
  try {
    const answer = await withTimeout(clock, 5_000, 'the health probe', probe); // rejects at the deadline, even if the probe hangs
    console.log(`${at()} ${answer}`);
  } catch (error) {
    if (error instanceof RuntimeError) console.log(`${at()} ${error.code}: ${error.message}`);
  }
});
await clock.advance(60_000);
stop();
console.log(`timers left: ${clock.pending}`);
