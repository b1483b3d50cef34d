/**
 * The HTTP(S) proxy a coding-agent CLI under test is given: it refuses
 * every request and tunnel at once (403), so a CLI that reaches for the
 * network past the gateway (update checks, telemetry, model catalogues)
 * fails fast instead of hanging, and records where it tried to go, so the
 * test can say so. All of it on 127.0.0.1.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RefusingProxy {
  url: string;
  /** The hosts (`host:port`) the CLI tried to reach through the proxy, in order, repeats included. */
  attempts: string[];
  close(): Promise<void>;
}

export async function startRefusingProxy(): Promise<RefusingProxy> {
  const attempts: string[] = [];
  const server: Server = createServer((req, res) => {
    attempts.push(new URL(req.url ?? '/', 'http://unknown').host);
    res.writeHead(403, { 'content-type': 'text/plain', connection: 'close' }).end('off-loopback traffic is refused in tests\n');
  });
  server.on('connect', (req, socket) => {
    attempts.push(req.url ?? '');
    socket.end('HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    attempts,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
