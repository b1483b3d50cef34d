/**
 * @module sseClient
 * A small Server-Sent Events reader for tests: it keeps every event it has
 * parsed and lets a test wait for the one it expects.
 */

/** One parsed event. */
export interface SseEvent {
  id: string | undefined;
  event: string;
  data: Record<string, unknown>;
}

/** An open event stream. */
export interface SseConnection {
  status: number;
  events: SseEvent[];
  /** Comment lines (`: ping`). */
  comments: string[];
  /** Resolves with the first event (already received or coming) that satisfies `match`. */
  waitFor(match: (event: SseEvent) => boolean, what: string, timeoutMs?: number): Promise<SseEvent>;
  /** The id of the last event that had one. */
  lastId(): string | undefined;
  close(): void;
}

/** Opens `url` and parses its frames as they arrive. */
export async function openEvents(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  const parse = (frame: string) => {
    let id: string | undefined;
    let event = 'message';
    const data: string[] = [];
    for (const line of frame.split('\n')) {
      if (line.startsWith(':')) comments.push(line.slice(1).trim());
      else if (line.startsWith('id:')) id = line.slice(3).trim();
      else if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0) events.push({ id, event, data: JSON.parse(data.join('\n')) });
    for (const waiter of waiters) waiter();
  };
  void (async () => {
    let buffer = '';
    // One decoder for the whole stream: a character whose bytes straddle two chunks is held, not garbled.
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut = buffer.indexOf('\n\n');
        while (cut >= 0) {
          parse(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
          cut = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // Aborted by close().
    }
  })();
  return {
    status: response.status,
    events,
    comments,
    lastId: () => events.findLast((event) => event.id !== undefined)?.id,
    waitFor(match, what, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = events.find(match);
          if (!found) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(events.map((e) => [e.event, e.data]))}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => abort.abort(),
  };
}
