/**
 * @module jsonArraySink
 * Gemini's `streamGenerateContent` without `?alt=sse` streams one JSON
 * array, an element per chunk (`[{…}\n,\r\n{…}]`). The relay writes every
 * Gemini stream as server-sent events, so this sink rewrites them on the way
 * out: each `data:` event becomes an array element, comments (keep-alives)
 * are dropped, and the array is closed at the end, even after an error
 * element.
 */
import type { ResponseSink } from '@switchyard/relay';

/** Data payloads of the whole SSE events in `text`. */
function payloads(text: string): string[] {
  const out: string[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart());
    if (data.length > 0) out.push(data.join('\n'));
  }
  return out;
}

/**
 * Wraps a sink so a Gemini SSE stream goes out as a JSON array.
 *
 * @example
 * ```ts
 * await relay.handle(request, jsonArraySink(nodeResponseSink(res)));
 * ```
 */
export function jsonArraySink(inner: ResponseSink): ResponseSink {
  let streaming = false;
  let elements = 0;
  const convert = (chunk: Uint8Array | string): string => {
    let out = '';
    for (const payload of payloads(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'))) {
      out += (elements === 0 ? '[' : '\n,\r\n') + payload;
      elements++;
    }
    return out;
  };
  return {
    get headersSent() {
      return inner.headersSent;
    },
    get closed() {
      return inner.closed;
    },
    writeHead(status, headers) {
      streaming = status === 200 && /text\/event-stream/.test(headers['content-type'] ?? '');
      inner.writeHead(status, streaming ? { ...headers, 'content-type': 'application/json; charset=utf-8' } : headers);
    },
    write(chunk) {
      if (!streaming) return inner.write(chunk);
      const text = convert(chunk);
      return text.length > 0 ? inner.write(text) : true;
    },
    drain: () => inner.drain(),
    end(chunk) {
      if (!streaming) return inner.end(chunk);
      const text = chunk === undefined ? '' : convert(chunk);
      inner.end(`${text}${elements === 0 ? '[' : ''}]`);
    },
  };
}
