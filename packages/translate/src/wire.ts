/**
 * @module @switchyard/translate/wire
 * Building blocks for provider adapters that speak a family's wire format
 * with a twist of their own (the relay's adapters use them): JSON field
 * helpers, the turn and setting rules every encoder shares, and each
 * family's usage reader. An application translating between families needs
 * only the root export.
 */

export { usageFromAnthropic } from './anthropic/response.js';
export { dropResultImages, dropSetting, dropSettings, mergeConsecutiveTurns } from './common.js';
export { compact, isObject, type Json, parseArguments, unsupported } from './fields.js';
export { usageFromGemini } from './gemini/response.js';
export { usageFromResponses } from './responses/response.js';
export type { UpstreamStreamError } from './streamTranslator.js';
