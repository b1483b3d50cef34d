/**
 * @module listen
 * Binding the gateway's HTTP server. A bind that fails (the port in use,
 * a privileged port) becomes a {@link GatewayListenError} naming the
 * address and what to do, with the system's code (`EADDRINUSE`, …) kept
 * for callers that tell the causes apart.
 */
import type { Server } from 'node:http';

/** What to do about the usual bind failures. */
const ADVICE: Record<string, string> = {
  EADDRINUSE: 'the address is in use: stop the process that holds the port, or set another `port` in the config',
  EACCES: 'permission denied: ports below 1024 need privileges; set a higher `port` in the config',
  EADDRNOTAVAIL: 'no interface of this machine has that address: set `host` to one it has (127.0.0.1 for loopback)',
};

/** `host:port`, with an IPv6 host in brackets. */
export function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * The gateway could not bind its address. `code` is the system's (`EADDRINUSE`, `EACCES`, …);
 * the original error is the `cause`.
 */
export class GatewayListenError extends Error {
  override name = 'GatewayListenError';
  readonly code: string | undefined;

  constructor(
    readonly host: string,
    readonly port: number,
    cause: NodeJS.ErrnoException,
  ) {
    const advice = cause.code ? ADVICE[cause.code] : undefined;
    super(`the gateway cannot listen on ${hostPort(host, port)}: ${cause.code ?? 'error'}, ${advice ?? cause.message}`, { cause });
    this.code = cause.code;
  }
}

/**
 * Binds `server` to `host:port`; a failure rejects with a {@link GatewayListenError}.
 *
 * @example
 * ```ts
 * await listen(server, 8317, '127.0.0.1');
 * ```
 */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(new GatewayListenError(host, port, error));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}
