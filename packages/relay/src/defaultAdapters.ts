/**
 * @module defaultAdapters
 * The provider kinds a relay speaks when it is given no adapters of its own.
 * Kept apart from the relay so that the relay's pipeline does not import
 * every provider, and so that one list says which kinds ship.
 */
import { AdapterRegistry } from './providers/adapter.js';
import { anthropicAdapter } from './providers/anthropic.js';
import { cloudCodingAssistantAdapter } from './providers/cloudCodingAssistant.js';
import { codeAssistantAdapter } from './providers/codeAssistant.js';
import { geminiAdapter } from './providers/gemini.js';
import { createMockAdapter } from './providers/mock.js';
import { openAiAdapter, openAiCompatibleAdapter } from './providers/openai.js';
import { openAiResponsesAdapter } from './providers/responses.js';

/**
 * The default adapters: `openai`, `openai-compatible`, `openai-responses`,
 * `anthropic`, `gemini`, `code-assistant`, `cloud-coding-assistant`, and the
 * demo `mock`.
 */
export function defaultAdapters(): AdapterRegistry {
  return new AdapterRegistry([
    openAiAdapter,
    openAiCompatibleAdapter,
    openAiResponsesAdapter,
    anthropicAdapter,
    geminiAdapter,
    codeAssistantAdapter,
    cloudCodingAssistantAdapter,
    createMockAdapter(),
  ]);
}
