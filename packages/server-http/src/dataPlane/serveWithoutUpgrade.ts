/**
 * @module serveWithoutUpgrade
 * Answers a request that asks to upgrade to a protocol the server does not
 * take (h2c, which `curl --http2` asks for on `http://`) as the plain
 * HTTP/1.1 request it also is: RFC 9110 §7.8 lets a server ignore `Upgrade`,
 * and RFC 9113 §3.1 expects an HTTP/1.1 answer when it does.
 *
 * node:http hands every request with `Connection: upgrade` to the server's
 * `upgrade` listener once there is one, after taking the socket from its
 * HTTP parser (the `shouldUpgradeCallback` server option that would let it
 * pass such requests on as plain ones came in Node 24.9). So
 * the request head is written out again without the upgrade, put back in
 * front of the bytes not yet parsed, and the socket is given to the server
 * as a new connection through its documented `connection` event. The
 * server's parser then reads the request, body framing included, as the
 * client sent it.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** Headers and `Connection` options that belong to the upgrade and go with it. */
const UPGRADE_FIELDS = new Set(['upgrade', 'http2-settings']);

/**
 * The request head as the client sent it, less `Upgrade`, `HTTP2-Settings`
 * and their `Connection` options; header names, order and values stay as
 * they were. Latin-1 is the encoding node:http decoded the head with.
 */
export function headWithoutUpgrade(req: IncomingMessage): Buffer {
  const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    const lower = name.toLowerCase();
    if (UPGRADE_FIELDS.has(lower)) continue;
    if (lower === 'connection') {
      const kept = value
        .split(',')
        .map((option) => option.trim())
        .filter((option) => option !== '' && !UPGRADE_FIELDS.has(option.toLowerCase()));
      if (kept.length > 0) lines.push(`${name}: ${kept.join(', ')}`);
      continue;
    }
    lines.push(`${name}: ${value}`);
  }
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

/** node:http's own record of the response being written on a socket (set by `assignSocket`, cleared on finish). */
type HttpSocket = Duplex & { _httpMessage?: ServerResponse | null };

/**
 * Runs `then` once no earlier response is being written on the socket. With
 * pipelining, the answers to requests sent before this one may still be
 * under way; writing this one's answer first would reorder them. Each
 * response's `close` comes after node:http has moved the next queued one
 * onto the socket, so the check is repeated until none is left.
 */
function afterEarlierResponses(socket: Duplex, then: () => void): void {
  const writing = (socket as HttpSocket)._httpMessage;
  if (!writing) {
    then();
    return;
  }
  writing.once('close', () => afterEarlierResponses(socket, then));
}

/**
 * Serves an upgrade request the server does not take as a plain HTTP/1.1
 * request, on a cleartext node:http server: call it from the server's
 * `upgrade` listener for every upgrade other than the ones it accepts.
 *
 * @example
 * ```ts
 * server.on('upgrade', (req, socket, head) => {
 *   if (isWebsocketUpgrade(req)) websocket.handleUpgrade(req, socket, head);
 *   else serveWithoutUpgrade(server, req, socket, head);
 * });
 * ```
 */
export function serveWithoutUpgrade(server: Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  // node:http took its error listener off with the parser; a reset while waiting must not go unhandled.
  const onError = () => socket.destroy();
  socket.on('error', onError);
  afterEarlierResponses(socket, () => {
    socket.off('error', onError);
    // An earlier response may have closed the connection (`Connection: close`), or the client left.
    if (socket.destroyed || !socket.writable) {
      socket.destroy();
      return;
    }
    // The keep-alive timer an earlier response set would otherwise run through this request.
    (socket as Socket).setTimeout?.(server.timeout || 0);
    socket.unshift(Buffer.concat([headWithoutUpgrade(req), head]));
    server.emit('connection', socket);
  });
}
