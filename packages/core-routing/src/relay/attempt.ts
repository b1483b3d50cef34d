/**
 * @module attempt
 * One try of one request against one provider: send, then either read the
 * whole answer (non-streaming) or pass the event stream through chunk by
 * chunk with backpressure. It reports what happened without deciding what
 * to do next; the relay decides whether to retry.
 */

import type { ProviderAdapter, Transport } from './providers/adapter.js';
import type { ResponseSink } from './sink.js';
import { OpenAiStreamTap } from './sse.js';
import type { UpstreamFailure, UpstreamRequest, Usage } from './types.js';
import { classifyTransportError } from './upstream.js';

/** The most of an upstream answer read into memory (non-streaming bodies, error bodies). */
const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;

/** What one attempt came to. */
export type AttemptResult =
  /** The client has its answer. */
  | {
      kind: 'success';
      status: number;
      headers: Record<string, string>;
      body: Uint8Array | undefined;
      usage: Usage | undefined;
      ttfbMs: number;
    }
  /** Nothing reached the client: the relay may try again. */
  | { kind: 'failure'; failure: UpstreamFailure }
  /** The stream broke after bytes reached the client; it was ended with an error event. */
  | { kind: 'broken'; failure: UpstreamFailure; ttfbMs: number; usage: Usage | undefined };

/** What an attempt needs. */
export interface AttemptInput {
  request: UpstreamRequest;
  adapter: ProviderAdapter;
  transport: Transport;
  stream: boolean;
  /** Drop usage-only chunks the relay asked for but the client did not. */
  stripUsageOnlyChunks: boolean;
  sink: ResponseSink;
  /** Headers added to a successful response (request id, provider). */
  responseHeaders: Record<string, string>;
  /** Formats the event that ends a broken stream. */
  streamError: (failure: UpstreamFailure) => string;
  signal: AbortSignal;
  now: () => number;
  startedAt: number;
}

async function readAll(body: AsyncIterable<Uint8Array>, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) throw Object.assign(new Error(`upstream body exceeds ${limit} bytes`), { code: 'BODY_TOO_LARGE' });
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

/** Runs one attempt. Never throws: every outcome is a result. */
export async function runAttempt(input: AttemptInput): Promise<AttemptResult> {
  const { adapter } = input;
  let response: Awaited<ReturnType<Transport['send']>>;
  try {
    response = await input.transport.send(input.request, { signal: input.signal });
  } catch (error) {
    return { kind: 'failure', failure: classifyTransportError(error) };
  }
  if (response.status >= 400) {
    let body: Buffer;
    try {
      body = await readAll(response.body, 1024 * 1024);
    } catch {
      body = Buffer.alloc(0);
    }
    return { kind: 'failure', failure: adapter.classify(response.status, response.headers, body, input.now()) };
  }
  if (!input.stream) return finishBuffered(input, response);
  return pipeStream(input, response);
}

async function finishBuffered(input: AttemptInput, response: Awaited<ReturnType<Transport['send']>>): Promise<AttemptResult> {
  let body: Buffer;
  try {
    body = await readAll(response.body, MAX_BUFFERED_BYTES);
  } catch (error) {
    response.cancel();
    return { kind: 'failure', failure: classifyTransportError(error) };
  }
  let usage: Usage | undefined;
  const contentType = response.headers['content-type'] ?? 'application/json';
  if (contentType.includes('json')) {
    try {
      usage = input.adapter.usageFromResponse(JSON.parse(body.toString('utf8')));
    } catch {
      return { kind: 'failure', failure: { kind: 'server', status: response.status, message: 'upstream sent invalid JSON' } };
    }
  }
  const headers = { 'content-type': contentType, ...input.responseHeaders };
  const ttfbMs = input.now() - input.startedAt;
  input.sink.writeHead(response.status, headers);
  input.sink.end(body);
  return { kind: 'success', status: response.status, headers, body, usage, ttfbMs };
}

async function pipeStream(input: AttemptInput, response: Awaited<ReturnType<Transport['send']>>): Promise<AttemptResult> {
  const { sink } = input;
  const tap = new OpenAiStreamTap({ stripUsageOnlyChunks: input.stripUsageOnlyChunks, usageOf: input.adapter.usageFromEvent });
  let ttfbMs = -1;
  const headers = { ...SSE_HEADERS, ...input.responseHeaders };
  const broken = (failure: UpstreamFailure): AttemptResult => {
    if (!sink.headersSent) return { kind: 'failure', failure };
    if (!sink.closed) sink.end(input.streamError(failure));
    return { kind: 'broken', failure, ttfbMs, usage: tap.usage };
  };
  try {
    for await (const chunk of response.body) {
      const out = tap.push(chunk);
      if (out.length === 0) continue;
      if (!sink.headersSent) {
        sink.writeHead(200, headers);
        ttfbMs = input.now() - input.startedAt;
      }
      if (sink.closed) break;
      if (!sink.write(out)) await sink.drain();
      if (sink.closed) break;
    }
  } catch (error) {
    response.cancel();
    return broken(classifyTransportError(error));
  }
  if (sink.closed) {
    // The client left: stop reading upstream. Usage seen so far is still counted.
    response.cancel();
    return {
      kind: 'broken',
      failure: { kind: 'connection', status: null, message: 'client closed the connection' },
      ttfbMs,
      usage: tap.usage,
    };
  }
  if (!tap.complete) {
    return broken({ kind: 'connection', status: null, message: 'upstream ended the stream before it was complete' });
  }
  if (!sink.headersSent) {
    sink.writeHead(200, headers);
    ttfbMs = input.now() - input.startedAt;
  }
  // A stream that finished its choices but lacked the terminator still ends the way clients expect.
  sink.end(tap.sawDone ? undefined : 'data: [DONE]\n\n');
  return { kind: 'success', status: 200, headers, body: undefined, usage: tap.usage, ttfbMs };
}
