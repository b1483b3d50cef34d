/**
 * What the relay benchmarks share: starting `upstream.ts` and `proxy.ts` processes and waiting for their
 * `READY <port>`, a request body no earlier request sent, and one chat completion through a proxy.
 */
import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import type { Readable } from 'node:stream';
import type { Pool } from 'undici';

/** A started benchmark process. */
export interface Started {
  port: number;
  pid: number;
  child: ChildProcess;
}

/**
 * Runs `command argv` and resolves with the port it prints as `READY <port>`: on stdout, or with
 * `readyOnFd3` on fd 3, for a process whose stdout is its log (sent to /dev/null, as a deployment's log
 * collector would take it off the process). The child is added to `children`, for the caller to end.
 */
export function startReady(
  command: string,
  argv: readonly string[],
  options: { env?: NodeJS.ProcessEnv; readyOnFd3?: boolean; children: ChildProcess[] },
): Promise<Started> {
  const { readyOnFd3 = false } = options;
  const stdio: StdioOptions = readyOnFd3 ? ['ignore', openSync('/dev/null', 'w'), 'inherit', 'pipe'] : ['ignore', 'pipe', 'inherit'];
  const child = spawn(command, argv, { stdio, env: options.env ?? process.env });
  options.children.push(child);
  const ready = (readyOnFd3 ? child.stdio[3] : child.stdout) as Readable;
  return new Promise((resolve, reject) => {
    ready.on('data', (data: Buffer) => {
      const match = /READY (\d+)/.exec(data.toString());
      if (match) resolve({ port: Number(match[1]), pid: child.pid!, child });
    });
    child.on('exit', (code) => reject(new Error(`${argv.join(' ')} exited with ${code}`)));
  });
}

let serial = 0;
/** A body no earlier request sent (the question carries a serial number), so no cache could answer it. */
export const freshBody = () =>
  JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: `Say something about foxes, number ${serial++}.` }] });

/** One non-streamed chat completion through `pool` with a fresh body, its answer read whole; throws unless 200. */
export async function chatOnce(pool: Pool): Promise<void> {
  const response = await pool.request({
    path: '/v1/chat/completions',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
    body: freshBody(),
  });
  for await (const _chunk of response.body);
  if (response.statusCode !== 200) throw new Error(`answered ${response.statusCode}`);
}
