/**
 * @module expectContinue
 * `Expect: 100-continue` answered by the handler's own checks. A client that
 * sends it uploads nothing until the server says `100 Continue`, so every
 * answer the server gives before the 100 costs the client no upload. Node
 * sends the 100 at once unless told otherwise; here it is sent the moment
 * the handler starts reading the body, and not at all when the handler
 * answers without reading it. So a wrong key (401), an unknown path (404), a
 * wrong method (405), a refused media type (415) or a declared length over a
 * cap (413) is answered before any byte is uploaded, by the very checks that
 * answer a request without the header: no route, cap or key is listed twice.
 * Answered without its body, such a request closes its connection (node
 * cannot tell whether the client will still send the body).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * Sends `100 Continue` on `res` when `req`'s body is first read, unless the
 * final answer has been sent by then.
 *
 * Every way of reading a request (`data` listeners, `read()`, `pipe`, async
 * iteration, `Readable.toWeb`) asks the stream's `_read` for data, and node
 * asks for none before the handler does, so the first `_read` is the
 * handler's first read. Node's own drain of an unread body after the answer
 * goes through `_read` too, which is why the answer is checked first.
 *
 * @example
 * ```ts
 * server.on('checkContinue', (req, res) => {
 *   sendContinueOnFirstRead(req, res);
 *   server.emit('request', req, res);
 * });
 * ```
 */
export function sendContinueOnFirstRead(req: IncomingMessage, res: ServerResponse): void {
  const readFromSocket = req._read;
  req._read = function readAfterContinue(this: IncomingMessage, size: number) {
    req._read = readFromSocket;
    if (!res.headersSent) res.writeContinue();
    return readFromSocket.call(this, size);
  };
}

/**
 * Makes `server` answer `Expect: 100-continue` with {@link sendContinueOnFirstRead}:
 * its `request` listeners get such requests as any other, and the 100 goes out
 * only when they read the body.
 *
 * @example
 * ```ts
 * const server = createServer(getRequestListener(app.fetch));
 * continueWhenBodyIsRead(server);
 * ```
 */
export function continueWhenBodyIsRead(server: Server): void {
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    sendContinueOnFirstRead(req, res);
    server.emit('request', req, res);
  });
}
