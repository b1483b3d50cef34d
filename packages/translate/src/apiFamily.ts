/**
 * @module apiFamily
 * The four API families the translators speak: a client's ingress and a
 * provider's wire format are each one of these.
 */

/** An LLM API family. */
export type ApiFamily = 'openai-chat' | 'openai-responses' | 'anthropic-messages' | 'gemini';
