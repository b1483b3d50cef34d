/**
 * @module attempt
 * One try of one request against one provider: send, then either read the
 * whole answer (non-streaming) or pass the event stream through chunk by
 * chunk with backpressure. It reports what happened without deciding what
 * to do next; the relay decides whether to retry.
 */

import { Readable } from 'node:stream';
import { readCappedBody, type Scheduler, type TimerHandle } from '@switchyard/runtime';
import type { ErrorInfo } from '@switchyard/translate';
import type { UpstreamStreamError } from '@switchyard/translate/wire';
import type { BufferLimits } from './bufferedDispatch.js';
import { type Exchange, UnreadableUpstreamBody } from './exchange.js';
import type { ProviderAdapter, SendOptions, Transport } from './providers/adapter.js';
import type { ResponseSink } from './sink.js';
import { isStreamOpening } from './streamOpening.js';
import type { UpstreamFailure, UpstreamResponse, Usage } from './types.js';
import { classifyTransportError } from './upstream.js';

/** The most of an upstream answer read into memory (non-streaming bodies). */
const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;
/** The most of an upstream error body read (a larger one is classified without it). */
const MAX_ERROR_BYTES = 1024 * 1024;
/** What a non-streamed attempt asks the transport to read before it resolves. */
const BUFFER_LIMITS: BufferLimits = { maxBytes: MAX_BUFFERED_BYTES, maxErrorBytes: MAX_ERROR_BYTES };

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
  /** The stream broke after bytes reached the client; it was ended with an error event (the upstream's, or the relay's). */
  | { kind: 'broken'; failure: UpstreamFailure; ttfbMs: number; usage: Usage | undefined };

/** What an attempt needs. */
export interface AttemptInput {
  /** How the request goes up and the answer comes back (pass-through or translated). */
  exchange: Exchange;
  adapter: ProviderAdapter;
  transport: Transport;
  stream: boolean;
  sink: ResponseSink;
  /** Headers added to a successful response (request id, provider). */
  responseHeaders: Record<string, string>;
  /** What the client is told about a failure (for the event that ends a broken stream). */
  describeFailure: (failure: UpstreamFailure) => ErrorInfo;
  /** Keep-alives during a stream's silences, once it has started (interval 0: none). */
  keepAlive?: { intervalMs: number; scheduler: Scheduler };
  /** Aborted when the client goes away (absent: the attempt runs to its end). */
  signal?: AbortSignal;
  now: () => number;
  startedAt: number;
}

function tooLarge(limit: number): Error {
  return Object.assign(new Error(`upstream body exceeds ${limit} bytes`), { code: 'BODY_TOO_LARGE' });
}

/** Reads a whole body, up to `limit` bytes; a body that closes early fails as a dropped socket would. */
function readAll(body: AsyncIterable<Uint8Array>, limit: number): Promise<Buffer> {
  return readCappedBody(body, limit, {
    tooLarge,
    closedEarly: () => Object.assign(new Error('upstream body closed before its end'), { code: 'UND_ERR_SOCKET' }),
  });
}

/** What a chunk handler says: go on, stop reading, or wait for the promise (backpressure) and then say. */
type ChunkVerdict = undefined | typeof STOP | Promise<undefined | typeof STOP>;
const STOP = Symbol('stop');

/**
 * Feeds each chunk of a body to `handle` until the body ends or `handle` says stop; rejects when
 * the body fails. Node streams (undici's bodies) are read through `data` events, pausing while a
 * verdict is pending: an async iterator costs a promise and a queued callback per chunk, and a
 * stream's time to first byte is what the client feels.
 */
function eachChunk(body: AsyncIterable<Uint8Array>, handle: (chunk: Uint8Array) => ChunkVerdict): Promise<void> {
  if (!(body instanceof Readable)) return eachChunkIterable(body, handle);
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
      if (error) reject(error);
      else resolve();
    };
    const onData = (chunk: Uint8Array) => {
      let verdict: ChunkVerdict;
      try {
        verdict = handle(chunk);
      } catch (error) {
        settle(error as Error);
        return;
      }
      if (verdict === STOP) settle();
      else if (verdict !== undefined) {
        body.pause();
        verdict.then(
          (next) => {
            if (next === STOP) settle();
            else if (!settled) body.resume();
          },
          (error: Error) => settle(error),
        );
      }
    };
    const onEnd = () => settle();
    const onError = (error: Error) => settle(error);
    // Destroyed without an error or an end: the same premature close an iterator reports.
    const onClose = () => settle(Object.assign(new Error('upstream body closed before its end'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
    body.on('close', onClose);
  });
}

async function eachChunkIterable(body: AsyncIterable<Uint8Array>, handle: (chunk: Uint8Array) => ChunkVerdict): Promise<void> {
  for await (const chunk of body) {
    const verdict = handle(chunk);
    if ((verdict === undefined ? undefined : await verdict) === STOP) return;
  }
}

/** The client went away mid-attempt: its own doing, not the provider's or the credential's. */
const clientClosed = (): UpstreamFailure => ({ kind: 'client_closed', status: null, message: 'the client closed the connection' });

/**
 * A transport error as the failure it stands for. When the client has gone, the error is the
 * upstream call being aborted on its behalf (undici's abort, or the reset that follows it), so it
 * is the client's leaving, never a connection failure that would cool the provider or its credential.
 */
function transportFailure(input: AttemptInput, error: unknown): UpstreamFailure {
  return input.signal?.aborted === true || input.sink.closed ? clientClosed() : classifyTransportError(error);
}

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };

/** Runs one attempt. Never throws: every outcome is a result. */
export async function runAttempt(input: AttemptInput): Promise<AttemptResult> {
  const { adapter, exchange } = input;
  if (exchange.local || !exchange.request) return answerLocally(input);
  let response: UpstreamResponse;
  try {
    // A non-streamed answer is read whole: the transport may do it before resolving (no stream per response).
    const options: SendOptions = input.stream ? {} : { buffer: BUFFER_LIMITS };
    if (input.signal) options.signal = input.signal;
    response = await input.transport.send(exchange.request, options);
  } catch (error) {
    return { kind: 'failure', failure: transportFailure(input, error) };
  }
  if (response.status >= 400) {
    let body: Buffer;
    try {
      body = response.bytes ?? (await readAll(response.body, MAX_ERROR_BYTES));
    } catch {
      body = Buffer.alloc(0);
    }
    const failure = adapter.classify(response.status, response.headers, body, input.now());
    return { kind: 'failure', failure: failure.kind === 'client' ? exchange.clientError(failure) : failure };
  }
  if (!input.stream) return finishBuffered(input, response);
  return pipeStream(input, response);
}

/**
 * Reads the whole answer (unless the transport already did: `bytes`) and writes it to the client. Not an
 * async function: with the bytes at hand, which is how undici answers, it finishes at once.
 */
function finishBuffered(input: AttemptInput, response: UpstreamResponse): AttemptResult | Promise<AttemptResult> {
  if (response.bytes) return answerWhole(input, response, response.bytes);
  return readAll(response.body, MAX_BUFFERED_BYTES).then(
    (body) => answerWhole(input, response, body),
    (error: unknown): AttemptResult => {
      response.cancel();
      return { kind: 'failure', failure: transportFailure(input, error) };
    },
  );
}

/** Writes a complete upstream answer to the client, in the client's family. */
function answerWhole(input: AttemptInput, response: UpstreamResponse, body: Buffer): AttemptResult {
  let answer: ReturnType<Exchange['completeBody']>;
  try {
    answer = input.exchange.completeBody(body, response.headers['content-type'] ?? 'application/json');
  } catch (error) {
    if (!(error instanceof UnreadableUpstreamBody)) throw error;
    return { kind: 'failure', failure: { kind: 'server', status: response.status, message: error.message } };
  }
  const out = typeof answer.body === 'string' ? Buffer.from(answer.body) : answer.body;
  // The length up front: without it node:http frames the body in chunked encoding, more work for both ends.
  const headers = {
    'content-type': answer.contentType,
    'content-length': String(out.byteLength),
    ...input.exchange.headers,
    ...input.responseHeaders,
  };
  const ttfbMs = input.now() - input.startedAt;
  input.sink.writeHead(response.status, headers);
  input.sink.end(out);
  return { kind: 'success', status: response.status, headers, body: out, usage: answer.usage, ttfbMs };
}

/** An answer the exchange made without the provider (an estimated token count). */
function answerLocally(input: AttemptInput): AttemptResult {
  const local = input.exchange.local!;
  const body = Buffer.from(local.body);
  const headers = { ...local.headers, 'content-length': String(body.byteLength), ...input.responseHeaders };
  input.sink.writeHead(local.status, headers);
  input.sink.end(body);
  return { kind: 'success', status: local.status, headers, body, usage: undefined, ttfbMs: input.now() - input.startedAt };
}

/** Writes keep-alives whenever the stream has been silent for the interval. */
function keepAlives(input: AttemptInput, keepAlive: () => string): { wrote(): void; stop(): void } {
  const settings = input.keepAlive;
  if (!settings || settings.intervalMs <= 0) return { wrote() {}, stop() {} };
  const { scheduler, intervalMs } = settings;
  let last = scheduler.now();
  let timer: TimerHandle | undefined;
  const tick = () => {
    timer = undefined;
    if (input.sink.closed) return;
    if (scheduler.now() - last >= intervalMs) {
      input.sink.write(keepAlive());
      last = scheduler.now();
    }
    timer = scheduler.setTimeout(tick, Math.max(1, intervalMs - (scheduler.now() - last)));
  };
  return {
    wrote() {
      last = scheduler.now();
      timer ??= scheduler.setTimeout(tick, intervalMs);
    },
    stop() {
      if (timer !== undefined) scheduler.clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * An upstream stream that opens with an error event (a 200 whose first
 * event says "overloaded" or "rate limited") as the failure the same
 * status would have been: a 429 a rate limit (or exhausted quota), a 5xx
 * (Anthropic's 529 included) server trouble, so it counts for cooldowns
 * and is tried elsewhere. Other errors (the request's own fault) are
 * forwarded in the stream as they came.
 */
function retryableStreamError(error: UpstreamStreamError): UpstreamFailure | undefined {
  const status = error.status;
  if (status === 429) {
    const quota = error.type === 'insufficient_quota';
    return { kind: quota ? 'quota_exceeded' : 'rate_limit', status, message: error.message };
  }
  if (status !== undefined && status >= 500) return { kind: 'server', status, message: error.message };
  return undefined;
}

/**
 * An upstream error event after the first byte, as the failure its status stands for: a rate
 * limit or server trouble as {@link retryableStreamError} reads them, another 4xx the request's
 * own fault, and an error of unknown type the provider's (statusless, like a 5xx would count).
 */
function midStreamFailure(error: UpstreamStreamError): UpstreamFailure {
  const retryable = retryableStreamError(error);
  if (retryable) return retryable;
  const status = error.status ?? null;
  return { kind: status !== null && status < 500 ? 'client' : 'server', status, message: error.message };
}

/** Two stretches of a stream, as one (a tap returns all strings or all bytes; a string tail may follow bytes). */
function joined(head: Uint8Array | string, tail: Uint8Array | string): Uint8Array | string {
  if (typeof head === 'string' && typeof tail === 'string') return head + tail;
  return Buffer.concat([typeof head === 'string' ? Buffer.from(head) : head, typeof tail === 'string' ? Buffer.from(tail) : tail]);
}

async function pipeStream(input: AttemptInput, response: UpstreamResponse): Promise<AttemptResult> {
  const { sink } = input;
  const tap = input.exchange.createTap();
  let ttfbMs = -1;
  const headers = { ...SSE_HEADERS, ...input.exchange.headers, ...input.responseHeaders };
  const alive = keepAlives(input, () => tap.keepAlive());
  // Set when the upstream's first word is an error worth another try: nothing went out, so the relay may retry.
  let refusedBeforeFirstByte: UpstreamFailure | undefined;
  // The stream's opening events (a start event, pings, comments), held back until the answer begins so that
  // an error right after them, in a later chunk, still leaves nothing sent and the attempt retryable.
  let opening: Uint8Array | string | undefined;
  // A translated stream's OpenAI chat role chunk is its upstream's start event; a passed-through one is forwarded at once.
  const openingOptions = { roleChunks: input.exchange.translated };
  const broken = (failure: UpstreamFailure): AttemptResult => {
    alive.stop();
    if (!sink.headersSent) return { kind: 'failure', failure };
    if (!sink.closed) sink.end(tap.fail(input.describeFailure(failure)));
    return { kind: 'broken', failure, ttfbMs, usage: tap.usage };
  };
  try {
    await eachChunk(response.body, (chunk) => {
      let out = tap.push(chunk);
      if (!sink.headersSent) {
        if (tap.upstreamError) {
          refusedBeforeFirstByte = retryableStreamError(tap.upstreamError);
          if (refusedBeforeFirstByte) return STOP;
        }
        if (out.length === 0) return undefined;
        if (isStreamOpening(out, openingOptions)) {
          opening = opening === undefined ? out : joined(opening, out);
          return undefined;
        }
        if (opening !== undefined) out = joined(opening, out);
        opening = undefined;
        sink.writeHead(200, headers);
        ttfbMs = input.now() - input.startedAt;
      } else if (out.length === 0) return undefined;
      if (sink.closed) return STOP;
      alive.wrote();
      if (!sink.write(out)) return sink.drain().then(() => (sink.closed ? STOP : undefined));
      return sink.closed ? STOP : undefined;
    });
  } catch (error) {
    response.cancel();
    return broken(transportFailure(input, error));
  }
  alive.stop();
  if (refusedBeforeFirstByte) {
    response.cancel();
    return { kind: 'failure', failure: refusedBeforeFirstByte };
  }
  if (sink.closed) {
    // The client left: stop reading upstream. Usage seen so far is still counted.
    response.cancel();
    return { kind: 'broken', failure: clientClosed(), ttfbMs, usage: tap.usage };
  }
  // Some streams only show they are complete once they close (no end marker): settle the tap first.
  // A stream that finished its answer but lacked its closing events still ends the way clients expect.
  const closing = tap.finish();
  if (tap.upstreamError && sink.headersSent) {
    // The error event went to the client in its shape and ends the stream as the upstream meant (too late
    // to retry); the attempt still failed as the error's status would have, for cooldowns, health and metrics.
    sink.end(closing.length > 0 ? closing : undefined);
    return { kind: 'broken', failure: midStreamFailure(tap.upstreamError), ttfbMs, usage: tap.usage };
  }
  if (!tap.complete) {
    return broken({ kind: 'connection', status: null, message: 'upstream ended the stream before it was complete' });
  }
  if (!sink.headersSent) {
    sink.writeHead(200, headers);
    ttfbMs = input.now() - input.startedAt;
  }
  const tail = opening === undefined ? closing : joined(opening, closing);
  sink.end(tail.length > 0 ? tail : undefined);
  return { kind: 'success', status: 200, headers, body: undefined, usage: tap.usage, ttfbMs };
}
