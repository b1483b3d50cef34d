/**
 * @module fakeGemini
 * A local stand-in for Google's Gemini API (`<prefix>/models/<m>:generateContent`,
 * `:streamGenerateContent?alt=sse`, `:countTokens`, `<prefix>/models`):
 * each streamed event is a whole `GenerateContentResponse`, the last one
 * with `finishReason` and `usageMetadata`; function calls arrive whole.
 * Scriptable like the other fakes.
 */
import {
  FAKE_TOOL_ARGUMENTS,
  FAKE_USAGE,
  type FakeDialect,
  type FakeUpstream,
  type FakeUpstreamOptions,
  startFakeUpstream,
} from './fakeUpstream.js';

const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
const usageMetadata = {
  promptTokenCount: FAKE_USAGE.input,
  candidatesTokenCount: FAKE_USAGE.output,
  totalTokenCount: FAKE_USAGE.input + FAKE_USAGE.output,
};

function chunk(model: string, parts: unknown[], finish?: string) {
  const candidate: Record<string, unknown> = { content: { role: 'model', parts }, index: 0 };
  if (finish) candidate.finishReason = finish;
  return { candidates: [candidate], ...(finish ? { usageMetadata } : {}), modelVersion: model, responseId: 'fake-response-1' };
}

const functionCall = (tool: string) => ({ functionCall: { name: tool, args: JSON.parse(FAKE_TOOL_ARGUMENTS) } });

/** Gemini's side of the fake. */
export const geminiDialect: FakeDialect = {
  route(method, path, query) {
    if (method === 'GET' && path === '/models') return { kind: 'models' };
    const match = /^\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(path);
    if (method === 'GET' && path.startsWith('/models/')) return { kind: 'model', id: decodeURIComponent(path.slice(8)) };
    if (method !== 'POST' || !match) return undefined;
    const model = decodeURIComponent(match[1]!);
    if (match[2] === 'countTokens') return { kind: 'count', model };
    // Without alt=sse Google streams a JSON array; the relay always asks for SSE, and so does the fake.
    if (match[2] === 'streamGenerateContent' && !/(^|&)alt=sse(&|$)/.test(query)) return undefined;
    return { kind: 'generate', stream: match[2] === 'streamGenerateContent', model };
  },
  lastUserText(body) {
    const contents = Array.isArray(body.contents) ? (body.contents as { role?: string; parts?: { text?: string }[] }[]) : [];
    const last = [...contents].reverse().find((c) => (c.role ?? 'user') === 'user' && c.parts?.some((p) => typeof p.text === 'string'));
    return (last?.parts ?? []).map((p) => p.text ?? '').join('');
  },
  toolName(body) {
    const tools = Array.isArray(body.tools) ? (body.tools as { functionDeclarations?: { name?: string }[] }[]) : [];
    const declarations = tools.flatMap((t) => t.functionDeclarations ?? []);
    return declarations.length > 0 ? (declarations[0]?.name ?? 'tool') : undefined;
  },
  complete: (model, content, tool) => chunk(model, [tool ? functionCall(tool) : { text: content }], 'STOP'),
  stream(model, parts, tool) {
    if (tool) return { head: [], parts: [], tail: [sse(chunk(model, [functionCall(tool)], 'STOP'))] };
    return { head: [], parts: parts.map((text) => sse(chunk(model, [{ text }]))), tail: [sse(chunk(model, [{ text: '' }], 'STOP'))] };
  },
  models: (ids) => ({
    models: ids.map((id) => ({ name: `models/${id}`, displayName: id, supportedGenerationMethods: ['generateContent', 'countTokens'] })),
  }),
  count: (body) => {
    const request = (body.generateContentRequest as Record<string, unknown> | undefined) ?? body;
    return { totalTokens: Math.ceil(JSON.stringify(request.contents ?? []).length / 4) };
  },
  error: (status, message) => ({
    error: { code: status, message, status: status === 429 ? 'RESOURCE_EXHAUSTED' : status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT' },
  }),
};

/**
 * Starts a fake Gemini upstream.
 *
 * @example
 * ```ts
 * const upstream = await startFakeGemini();
 * // providers: [{ name: 'google', kind: 'gemini', baseUrl: upstream.url, models: ['gemini-2.5-flash'] }]
 * ```
 */
export function startFakeGemini(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  return startFakeUpstream(geminiDialect, { ...options, prefix: options.prefix ?? '/v1beta' });
}
