/**
 * @module gatewayClient
 * A minimal client of a Switchyard gateway's OpenAI-compatible
 * `/v1/chat/completions`, used by the LLM triage classifier and the LLM
 * reviewer. The gateway URL is operator configuration (not caller input);
 * the API key never appears in errors.
 */

import type { Dispatcher } from 'undici';
import { request } from 'undici';
import { WorkflowError } from '../errors.js';

/** A chat message. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Options of {@link GatewayClient}. */
export interface GatewayClientOptions {
  /** Gateway base URL, e.g. `http://127.0.0.1:8317`. */
  baseUrl: string;
  /** Model name the gateway routes. */
  model: string;
  apiKey?: string;
  /** Per-request timeout (default 60 s). */
  timeoutMs?: number;
  /** An undici dispatcher (connection pool, proxy); default the global one. */
  dispatcher?: Dispatcher;
}

/**
 * Calls `/v1/chat/completions` and returns the first choice's content.
 *
 * @example
 * ```ts
 * const gateway = new GatewayClient({ baseUrl: 'http://127.0.0.1:8317', model: 'gpt-4.1-mini', apiKey: process.env.SWITCHYARD_KEY });
 * const text = await gateway.complete([{ role: 'user', content: 'Say hi' }]);
 * ```
 */
export class GatewayClient {
  private readonly url: URL;

  constructor(private readonly options: GatewayClientOptions) {
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch (error) {
      throw new WorkflowError('invalid_argument', `gateway.baseUrl: not a URL: ${JSON.stringify(options.baseUrl)}`, {
        cause: error,
        details: { field: 'gateway.baseUrl' },
      });
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:')
      throw new WorkflowError('invalid_argument', 'gateway.baseUrl: must be http or https', { details: { field: 'gateway.baseUrl' } });
    this.url = new URL('v1/chat/completions', base.href.endsWith('/') ? base.href : `${base.href}/`);
  }

  get model(): string {
    return this.options.model;
  }

  /** Sends the messages; `json` asks for a JSON object response. */
  async complete(messages: ChatMessage[], options: { json?: boolean; temperature?: number; signal?: AbortSignal } = {}): Promise<string> {
    const body = JSON.stringify({
      model: this.options.model,
      messages,
      temperature: options.temperature ?? 0,
      ...(options.json ? { response_format: { type: 'json_object' } } : {}),
    });
    const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 60_000);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let status: number;
    let text: string;
    try {
      const response = await request(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
        body,
        signal,
        ...(this.options.dispatcher ? { dispatcher: this.options.dispatcher } : {}),
      });
      status = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      const code = timeout.aborted ? 'timeout' : options.signal?.aborted ? 'cancelled' : 'upstream_failed';
      throw new WorkflowError(code, `gateway ${this.url.origin}: ${(error as Error).message}`, { cause: error });
    }
    if (status < 200 || status >= 300) {
      throw new WorkflowError('upstream_failed', `gateway answered ${status}: ${text.slice(0, 300)}`, { details: { status } });
    }
    let content: unknown;
    try {
      content = (JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
    } catch (error) {
      throw new WorkflowError('upstream_failed', 'gateway answered with something that is not JSON', { cause: error });
    }
    if (typeof content !== 'string') throw new WorkflowError('upstream_failed', 'gateway answer has no choices[0].message.content');
    return content;
  }

  /** Like {@link complete}, parsing the content as a JSON object (tolerating a ```json fence). */
  async completeJson(messages: ChatMessage[], options: { signal?: AbortSignal } = {}): Promise<Record<string, unknown>> {
    const content = await this.complete(messages, { ...options, json: true });
    const stripped = content
      .trim()
      .replace(/^```(?:json)?\s*/i, '')
      .replace(/\s*```$/, '');
    try {
      const value = JSON.parse(stripped);
      if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // fall through to the error below
    }
    throw new WorkflowError('upstream_failed', `the model did not answer with a JSON object: ${stripped.slice(0, 200)}`);
  }
}
