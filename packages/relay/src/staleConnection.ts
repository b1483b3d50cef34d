/**
 * @module staleConnection
 * Tells the keep-alive race apart from a real upstream failure. An upstream
 * may close an idle pooled connection just as the gateway writes the next
 * request on it (its idle timeout fires as the socket is reused): the request
 * then fails with a socket error before any byte of its response. That says
 * nothing about the provider, and the request is safe to send again on a new
 * connection. undici does not expose whether a request went out on a reused
 * socket, so the transport's connector watches each socket it opens (once per
 * connection, nothing per request beyond a counter copy on each write) and
 * marks the errors that fit.
 */
import type { Socket } from 'node:net';
import { buildConnector } from 'undici';

/** Errors of a reused connection that closed before any byte of the request's response. */
const staleErrors = new WeakSet<object>();

/** Bytes the socket had read when the request being sent was written. */
const READ_AT_WRITE = Symbol('switchyard.readAtWrite');

type WatchedSocket = Socket & { [READ_AT_WRITE]?: number };

/**
 * Whether `error` is the keep-alive race: a socket error on a connection that
 * had already carried a response, with no byte of the current response read.
 * Only errors raised on sockets opened by {@link staleAwareConnector} qualify.
 *
 * @example
 * ```ts
 * try { await agent.request(options); } catch (error) { if (isStaleConnectionError(error)) retry(); }
 * ```
 */
export function isStaleConnectionError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && staleErrors.has(error);
}

/**
 * undici's connector, with each socket it opens watched for the keep-alive race.
 *
 * @example
 * ```ts
 * const agent = new Agent({ connect: staleAwareConnector({ timeout: 10_000 }) });
 * ```
 */
export function staleAwareConnector(options: buildConnector.BuildOptions): buildConnector.connector {
  const connect = buildConnector(options);
  return (connectOptions, callback) =>
    connect(connectOptions, (error, socket) => {
      if (socket) watch(socket as WatchedSocket);
      // undici's callback takes either (null, socket) or (error, null); pass on what came.
      (callback as (error: Error | null, socket: Socket | null) => void)(error, socket);
    });
}

function watch(socket: WatchedSocket): void {
  const write = socket.write;
  // Every write of a request notes the bytes read so far: a response byte arriving after it moves
  // `bytesRead` past the note. A plain property copy, so the hot path allocates nothing.
  socket.write = function writeNotingRead(this: WatchedSocket, chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    this[READ_AT_WRITE] = this.bytesRead;
    return (write as (chunk: unknown, encoding?: unknown, callback?: unknown) => boolean).call(this, chunk, encoding, callback);
  } as Socket['write'];
  // undici destroys the socket with the error it then fails the request with, so this sees that very object.
  socket.on('error', (error: unknown) => {
    const readAtWrite = socket[READ_AT_WRITE] ?? 0;
    // Bytes read before the write are earlier responses (the socket was reused); none since means
    // the upstream never started answering this request.
    if (readAtWrite > 0 && socket.bytesRead === readAtWrite && typeof error === 'object' && error !== null) staleErrors.add(error);
  });
}
