/**
 * @module scriptedStreams
 * Test-only (not exported, and not published: the package's `files` leave
 * out every `testing` folder under `src`): a {@link Transport} that answers
 * each request with a 200 event stream of scripted chunks, as an
 * upstream does that streams an answer, opens with an error event, or
 * breaks off (with an error event, a reset, a timeout) after some text;
 * one whose upstream stays silent until the client leaves; and the
 * Anthropic events such scripts are made of.
 */
import type { Transport } from '../providers/adapter.js';
import type { UpstreamRequest, UpstreamResponse } from '../types.js';

/**
 * A 200 stream per provider, each a list of upstream chunks. The first path
 * segment of the request's URL names the provider, so give each provider a
 * base URL ending with its name (`http://127.0.0.1:1/<name>`); a provider
 * with no script gets an empty stream. An `Error` in a script is thrown
 * where the body would go on, as a reset connection or a body timeout is.
 *
 * @example
 * ```ts
 * const transport = new ScriptedStreams({ busy: [overloadedEvent], fine: answer });
 * const relay = new Relay({ providers: [{ name: 'busy', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/busy', models: ['m'] }], transport });
 * ```
 */
export class ScriptedStreams implements Transport {
  /** The provider of each request sent, in order. */
  readonly sent: string[] = [];
  constructor(private readonly streams: Readonly<Record<string, readonly (string | Error)[]>>) {}

  async send(request: UpstreamRequest): Promise<UpstreamResponse> {
    const provider = new URL(request.url).pathname.split('/')[1]!;
    this.sent.push(provider);
    const chunks = this.streams[provider] ?? [];
    return {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: (async function* () {
        for (const c of chunks) {
          if (c instanceof Error) throw c;
          yield Buffer.from(c);
        }
      })(),
      cancel() {},
    };
  }
}

/**
 * An upstream that answers nothing until the request's signal aborts (the
 * client left), and then fails as a reset connection does: the error says
 * nothing of the client, so the relay has to tell from the signal.
 */
export class SilentUpstream implements Transport {
  /** The provider of each request sent, in order. */
  readonly sent: string[] = [];

  send(request: UpstreamRequest, options: { signal?: AbortSignal } = {}): Promise<UpstreamResponse> {
    this.sent.push(new URL(request.url).pathname.split('/')[1]!);
    return new Promise((_, reject) => {
      const reset = () => reject(Object.assign(new Error('other side closed'), { code: 'ECONNRESET' }));
      if (options.signal?.aborted) reset();
      else options.signal?.addEventListener('abort', reset, { once: true });
    });
  }
}

/**
 * The start of an Anthropic stream, in three chunks: `message_start` (9
 * input tokens, 1 output: {@link ANTHROPIC_OPENING_TOKENS}), then "Hel",
 * then "lo".
 */
export const anthropicOpening: readonly string[] = [
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":9,"output_tokens":1}}}\n\n',
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}\n\n',
];

/** The tokens {@link anthropicOpening} reports. */
export const ANTHROPIC_OPENING_TOKENS = 10;

/** An Anthropic error event (`rate_limit_error`, `overloaded_error`, `api_error`, ...). */
export const anthropicError = (type: string, message: string): string =>
  `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message } })}\n\n`;
