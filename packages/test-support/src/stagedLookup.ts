/**
 * @module stagedLookup
 * A stand-in for `dns.lookup` that answers what the test says, so tests can
 * stage DNS (a name that resolves to a public address now and to 127.0.0.1
 * later, a lookup that fails) without touching the network.
 */
import type { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { isIP } from 'node:net';

/** A staged lookup and the hosts it was asked for, in order. */
export interface StagedLookup {
  /** Pass it wherever a `dns.lookup` is taken, or a `lookup` option (net.connect, undici's `connect.lookup`). */
  lookup: typeof dnsLookup;
  asked: string[];
}

/**
 * A lookup answering `answer(hostname)`: an IP address, or an Error to fail with.
 * Answers asynchronously, as `dns.lookup` does, in both its one-address and `all: true` forms.
 *
 * @example
 * ```ts
 * let address = '93.184.215.14';
 * const { lookup } = stagedLookup(() => address);
 * address = '127.0.0.1'; // the name now "rebinds"
 * ```
 */
export function stagedLookup(answer: (hostname: string) => string | Error): StagedLookup {
  const asked: string[] = [];
  const lookup = (hostname: string, options: unknown, callback?: (...args: unknown[]) => void) => {
    const done = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
    asked.push(hostname);
    const result = answer(hostname);
    if (result instanceof Error) return process.nextTick(done, result);
    const family = isIP(result) === 6 ? 6 : 4;
    const wantsAll = typeof options === 'object' && options !== null && (options as { all?: boolean }).all === true;
    if (wantsAll) return process.nextTick(done, null, [{ address: result, family }] satisfies LookupAddress[]);
    process.nextTick(done, null, result, family);
  };
  return { lookup: lookup as unknown as typeof dnsLookup, asked };
}
