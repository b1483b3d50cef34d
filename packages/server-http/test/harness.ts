/**
 * @module harness
 * A gateway for the translation matrix: one data plane in front of four
 * fake upstreams, one per API family (OpenAI chat, OpenAI Responses,
 * Anthropic, Gemini), each serving its own model name, so a test picks the
 * upstream family by the model it asks for.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ProviderConfig, Relay, type RelayCredentialPool, UndiciTransport } from '@switchyard/relay';
import { type FakeUpstream, startFakeAnthropic, startFakeGemini, startFakeOpenAi } from '@switchyard/test-support';
import type { ApiFamily } from '@switchyard/translate';
import { createDataPlane } from '../src/dataPlane/dataPlane.js';

/** The client key every matrix test uses. */
export const CLIENT_KEY = 'sk-switchyard-test';

/** One upstream of the matrix. */
export interface MatrixUpstream {
  family: ApiFamily;
  /** The model name that routes to it. */
  model: string;
  provider: string;
  fake: FakeUpstream;
}

/** A pool with one fixed credential per provider. */
function pools(): { pool(provider: string): RelayCredentialPool } {
  return {
    pool: (provider) => ({
      acquire: () => ({ id: `key-${provider}`, token: `upstream-key-${provider}` }),
      reportSuccess() {},
      reportUsage() {},
      reportFailure() {},
      refresh: async () => ({ id: `key-${provider}`, token: `upstream-key-${provider}` }),
    }),
  };
}

/** A running matrix gateway. */
export interface MatrixGateway {
  /** `http://127.0.0.1:<port>` (no path). */
  origin: string;
  relay: Relay;
  upstreams: MatrixUpstream[];
  upstream(family: ApiFamily): MatrixUpstream;
  close(): Promise<void>;
}

/** Starts the fakes and the gateway. */
export async function startMatrixGateway(extraProviders: ProviderConfig[] = []): Promise<MatrixGateway> {
  const [openai, anthropic, gemini] = await Promise.all([startFakeOpenAi(), startFakeAnthropic(), startFakeGemini()]);
  const upstreams: MatrixUpstream[] = [
    { family: 'openai-chat', model: 'up-chat-model', provider: 'up-chat', fake: openai },
    { family: 'openai-responses', model: 'up-responses-model', provider: 'up-responses', fake: openai },
    { family: 'anthropic-messages', model: 'up-claude-model', provider: 'up-anthropic', fake: anthropic },
    { family: 'gemini', model: 'up-gemini-model', provider: 'up-gemini', fake: gemini },
  ];
  const kinds: Record<ApiFamily, string> = {
    'openai-chat': 'openai-compatible',
    'openai-responses': 'openai-responses',
    'anthropic-messages': 'anthropic',
    gemini: 'gemini',
  };
  const providers: ProviderConfig[] = [
    ...upstreams.map((u) => ({ name: u.provider, kind: kinds[u.family], baseUrl: u.fake.url, models: [u.model] })),
    ...extraProviders,
  ];
  const transport = new UndiciTransport({ requestTimeoutMs: 10_000 });
  const relay = new Relay({ providers, transport, credentials: pools(), maxAttempts: 1 });
  const dataPlane = createDataPlane({ relay, apiKeys: [CLIENT_KEY], maxBodyBytes: 256 * 1024 });
  const server: Server = createServer(async (req, res) => {
    if (!(await dataPlane.handle(req, res))) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    relay,
    upstreams,
    upstream: (family) => upstreams.find((u) => u.family === family)!,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await transport.close();
      await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
    },
  };
}

/** The tool every matrix test declares, in neutral terms. */
export const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Weather in a city',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
};

/** The last request a fake received for a family, with its body. */
export function lastRequest(upstream: MatrixUpstream) {
  return upstream.fake.requests.at(-1)!;
}

/** Reads a server-sent event stream into events. */
export async function readSse(response: Response): Promise<{ event: string | null; data: string }[]> {
  const text = await response.text();
  const events: { event: string | null; data: string }[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (!block.trim()) continue;
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (data.length > 0) events.push({ event, data: data.join('\n') });
  }
  return events;
}
