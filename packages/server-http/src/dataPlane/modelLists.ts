/**
 * @module modelLists
 * The model list in each family's shape: OpenAI's `{object: "list", data}`,
 * Anthropic's `{data, has_more, first_id, last_id}` (for clients that send
 * `anthropic-version`), and Gemini's `{models: [{name: "models/…"}]}`.
 */

import type { ModelListing } from '@switchyard/relay';
import type { ApiFamily } from '@switchyard/translate';

const GEMINI_METHODS = ['generateContent', 'streamGenerateContent', 'countTokens'];

/** One model in a family's shape. */
export function modelEntry(family: ApiFamily, model: ModelListing, created: number): Record<string, unknown> {
  if (family === 'anthropic-messages')
    return { type: 'model', id: model.id, display_name: model.id, created_at: new Date(created * 1000).toISOString() };
  if (family === 'gemini')
    return {
      name: `models/${model.id}`,
      baseModelId: model.id,
      version: '001',
      displayName: model.id,
      supportedGenerationMethods: GEMINI_METHODS,
    };
  return { id: model.id, object: 'model', created, owned_by: model.providers[0] ?? 'switchyard' };
}

/** The whole list in a family's shape. */
export function modelList(family: ApiFamily, models: readonly ModelListing[], created: number): Record<string, unknown> {
  const entries = models.map((m) => modelEntry(family, m, created));
  if (family === 'anthropic-messages')
    return { data: entries, has_more: false, first_id: models[0]?.id ?? null, last_id: models.at(-1)?.id ?? null };
  if (family === 'gemini') return { models: entries };
  return { object: 'list', data: entries };
}
