/**
 * @module wsResponseSink
 * The relay writes a Responses answer as it would to an HTTP client: a
 * status, then server-sent events (or, for a failure before the stream, one
 * JSON error body). This sink turns that into websocket messages: one JSON
 * message per event, the very event object of the HTTP stream (tagged with
 * the client's `request_id` when it gave one), keep-alive comments dropped;
 * an error body becomes one `{type: "error", status, error}` message in the
 * OpenAI error shape. The socket's buffer is the backpressure: past the
 * high-water mark `write` answers false and the relay waits on `drain`
 * before it reads more from upstream. `onCompleted` sees the finished
 * Response, so the connection can serve a later `previous_response_id`.
 */
import type { ResponseSink } from '@switchyard/relay';

/** The socket side of a sink: shared by every request on one connection. */
export interface WsOutlet {
  /** False once the socket is closing or closed. */
  readonly open: boolean;
  /** Sends a text message; false means the socket's buffer is past the high-water mark. */
  send(text: string, kind: 'event' | 'error'): boolean;
  /** Resolves once the buffer is below the high-water mark again (or the socket is gone). */
  drain(): Promise<void>;
}

const EVENT_BOUNDARY = /\r?\n\r?\n/;

/** The data of one SSE event (its `data:` lines joined), or undefined for a comment or an event without data. */
function dataOf(event: string): string | undefined {
  let data: string | undefined;
  for (const line of event.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const value = line.slice(line.startsWith('data: ') ? 6 : 5);
    data = data === undefined ? value : `${data}\n${value}`;
  }
  return data;
}

/**
 * A {@link ResponseSink} that answers one `response.create` on a websocket.
 *
 * @example
 * ```ts
 * await relay.handle(request, wsResponseSink(outlet, 'req-1', controller.signal));
 * ```
 */
export function wsResponseSink(
  outlet: WsOutlet,
  requestId: string | undefined,
  signal?: AbortSignal,
  onCompleted?: (response: Record<string, unknown>) => void,
): ResponseSink {
  const decoder = new TextDecoder();
  let status = 0;
  let streaming = false;
  let headersSent = false;
  let ended = false;
  let carry = '';
  let body = '';
  const tag = (message: Record<string, unknown>) => (requestId === undefined ? message : { ...message, request_id: requestId });
  const completed = (event: Record<string, unknown>) => {
    const response = event.response;
    if (event.type === 'response.completed' && typeof response === 'object' && response !== null)
      onCompleted?.(response as Record<string, unknown>);
  };

  const sendEvent = (data: string): boolean => {
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      return true; // not an event object (a `[DONE]` terminator, say): nothing to relay
    }
    if (typeof event !== 'object' || event === null || Array.isArray(event)) return true;
    const message = requestId === undefined ? data : JSON.stringify(tag(event as Record<string, unknown>));
    const kind = (event as { type?: unknown }).type === 'error' ? 'error' : 'event';
    completed(event as Record<string, unknown>);
    return outlet.send(message, kind);
  };

  /** Sends every complete event in `text`; keeps the incomplete rest for the next chunk. */
  const events = (text: string, final: boolean): boolean => {
    const parts = (carry + text).split(EVENT_BOUNDARY);
    carry = final ? '' : (parts.pop() ?? '');
    let more = true;
    for (const part of parts) {
      const data = dataOf(part);
      if (data !== undefined && !sendEvent(data)) more = false;
    }
    return more;
  };

  /** The answer of a request that failed before its stream began (or was not a stream at all). */
  const finishBody = () => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    const object = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
    if (status >= 200 && status < 300 && object?.object === 'response') {
      outlet.send(JSON.stringify(tag({ type: 'response.completed', response: object })), 'event');
      completed({ type: 'response.completed', response: object });
      return;
    }
    const error =
      typeof object?.error === 'object' && object.error !== null
        ? object.error
        : { type: 'api_error', code: 'upstream_error', message: `the gateway answered ${status} without an error body`, param: null };
    outlet.send(JSON.stringify(tag({ type: 'error', status: status >= 400 ? status : 502, error })), 'error');
  };

  return {
    get headersSent() {
      return headersSent;
    },
    get closed() {
      return ended || !outlet.open || signal?.aborted === true;
    },
    writeHead(code, headers) {
      status = code;
      headersSent = true;
      streaming = code >= 200 && code < 300 && /text\/event-stream/i.test(headers['content-type'] ?? '');
    },
    write(chunk) {
      if (ended || !outlet.open) return true;
      const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      if (streaming) return events(text, false);
      body += text;
      return true;
    },
    drain: () => outlet.drain(),
    end(chunk) {
      if (ended) return;
      const text =
        (chunk === undefined ? '' : typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true })) + decoder.decode();
      ended = true;
      if (!outlet.open) return;
      if (streaming) events(text, true);
      else {
        body += text;
        finishBody();
      }
    },
  };
}
