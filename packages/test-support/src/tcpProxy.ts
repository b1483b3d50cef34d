/**
 * @module tcpProxy
 * A loopback TCP proxy for simulating a server restart without restarting
 * the server: put it in front of the shared PostgreSQL, point the code under
 * test at the proxy, and `pause()` drops every connection and refuses new
 * ones (as a stopped server does) until `resume()`; `stall()` leaves open
 * connections open but silent (a network that stops delivering). Other engineers' tests
 * keep using the real server undisturbed.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A running proxy. */
export interface TcpProxy {
  /** Port the proxy listens on (127.0.0.1). */
  readonly port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** True between `pause()` and `resume()`. */
  readonly paused: boolean;
  /** Drops every open connection; new ones are refused until `resume()`. */
  pause(): Promise<void>;
  /** Accepts connections again, on the same port. */
  resume(): Promise<void>;
  /** Open connections stop carrying bytes, without closing (a network that silently stops delivering); new ones work. */
  stall(): void;
  /** Drops every connection and stops listening. */
  close(): Promise<void>;
  /** `url` with its host and port replaced by the proxy's. */
  rewrite(url: string): string;
}

/**
 * Starts a proxy on 127.0.0.1 (a free port) forwarding to `target`.
 *
 * @example
 * ```ts
 * const proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
 * const url = proxy.rewrite(postgres.url); // clients connect through the proxy
 * await proxy.pause(); // "PostgreSQL restarts"
 * await proxy.resume();
 * ```
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  let accepted = 0;
  let paused = false;
  let closed = false;
  let port = 0;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const onConnection = (client: Socket) => {
    if (paused) {
      client.destroy();
      return;
    }
    accepted++;
    track(client);
    const upstream = connect(target.port, target.host);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    // Either side ending or failing ends the pair, as a dropped server connection would.
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.once('error', drop).once('close', drop);
    upstream.once('error', drop).once('close', drop);
  };
  const listen = async (): Promise<Server> => {
    const server = createServer(onConnection);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no port');
    port = address.port;
    return server;
  };
  let server: Server | undefined = await listen();
  const stopListening = async () => {
    const current = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (current) await new Promise((resolve) => current.close(resolve));
  };
  return {
    get port() {
      return port;
    },
    get accepted() {
      return accepted;
    },
    get paused() {
      return paused;
    },
    // While paused the port is closed, so a client gets ECONNREFUSED exactly as from a stopped server.
    async pause() {
      paused = true;
      await stopListening();
    },
    async resume() {
      if (closed) throw new Error('proxy is closed');
      paused = false;
      server ??= await listen();
    },
    // A stalled pair stays in `sockets`: pause() and close() still end it (a paused socket never sees its peer leave).
    stall() {
      for (const [client, upstream] of pairs) {
        client.unpipe();
        upstream.unpipe();
        client.pause();
        upstream.pause();
      }
      pairs.clear();
    },
    async close() {
      closed = true;
      paused = true;
      await stopListening();
    },
    rewrite(url: string) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
  };
}
