/**
 * @module testTransports
 * Test-only (not exported from the package): a {@link Transport} that
 * answers each request with a 200 event stream of scripted chunks, as an
 * upstream does that streams an answer, opens with an error event, or
 * breaks off with one after some text.
 */
import type { Transport } from './providers/adapter.js';
import type { UpstreamRequest, UpstreamResponse } from './types.js';

/**
 * A 200 stream per provider, each a list of upstream chunks. The first path
 * segment of the request's URL names the provider, so give each provider a
 * base URL ending with its name (`http://127.0.0.1:1/<name>`); a provider
 * with no script gets an empty stream.
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
  constructor(private readonly streams: Readonly<Record<string, readonly string[]>>) {}

  async send(request: UpstreamRequest): Promise<UpstreamResponse> {
    const provider = new URL(request.url).pathname.split('/')[1]!;
    this.sent.push(provider);
    const chunks = this.streams[provider] ?? [];
    return {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: (async function* () {
        for (const c of chunks) yield Buffer.from(c);
      })(),
      cancel() {},
    };
  }
}
