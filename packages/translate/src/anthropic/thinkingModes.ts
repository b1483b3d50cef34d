/**
 * @module anthropic/thinkingModes
 * Which way each Claude model is asked to think. Claude Opus 4.7, the
 * Mythos models and the generation after them accept only adaptive
 * thinking (`thinking: {type: "adaptive"}`, the level in
 * `output_config.effort`) and answer a token budget with a 400; Opus 4.6
 * and Sonnet 4.6 accept both but deprecate budgets; earlier models
 * (Sonnet 4.5, Opus 4.5, Haiku 4.5, Claude 3.x) know only budgets
 * (`thinking: {type: "enabled", budget_tokens}`). A table, not a guess: a
 * model it does not know gets a budget, and a provider can add or correct
 * entries (`providers.<name>.options.thinking_modes`) without a release.
 */

import type { AnthropicThinkingMode } from '../codec.js';
import { Glob } from '../glob.js';

/**
 * The models that get adaptive thinking, as globs over the upstream model
 * name (a leading `*` also matches Bedrock's and Vertex's prefixed ids).
 */
export const DEFAULT_THINKING_MODES: Readonly<Record<string, AnthropicThinkingMode>> = {
  '*claude-opus-4-6*': 'adaptive',
  '*claude-sonnet-4-6*': 'adaptive',
  '*claude-opus-4-7*': 'adaptive',
  '*claude-opus-4-8*': 'adaptive',
  '*claude-mythos-*': 'adaptive',
  '*claude-fable-*': 'adaptive',
  '*claude-opus-5*': 'adaptive',
  '*claude-sonnet-5*': 'adaptive',
  '*claude-haiku-5*': 'adaptive',
};

/**
 * Whether `value` is a thinking mode: what a `thinking_modes` entry must be
 * (the gateway's config refuses any other value, naming the entry).
 *
 * @example
 * ```ts
 * isAnthropicThinkingMode('adaptive'); // true
 * isAnthropicThinkingMode('adaptiv'); // false
 * ```
 */
export function isAnthropicThinkingMode(value: unknown): value is AnthropicThinkingMode {
  return value === 'adaptive' || value === 'budget';
}

// The non-backtracking glob: the model name can be the client's, and a regular expression built from
// a glob such as `*a*a*a*b` takes time polynomial in a hostile name's length.
const compiled = new Map<string, Glob>();

function matches(glob: string, model: string): boolean {
  let pattern = compiled.get(glob);
  if (!pattern) {
    pattern = new Glob(glob);
    // Globs come from configuration: a handful, but keep the cache bounded anyway.
    if (compiled.size >= 256) compiled.clear();
    compiled.set(glob, pattern);
  }
  return pattern.test(model);
}

/**
 * How `model` is asked to think: the first matching glob of `overrides`,
 * else of {@link DEFAULT_THINKING_MODES}, else `budget`.
 *
 * @example
 * ```ts
 * anthropicThinkingMode('claude-opus-4-7'); // 'adaptive'
 * anthropicThinkingMode('claude-sonnet-4-5'); // 'budget'
 * anthropicThinkingMode('my-claude', { 'my-claude': 'adaptive' }); // 'adaptive'
 * ```
 */
export function anthropicThinkingMode(model: string, overrides?: Readonly<Record<string, AnthropicThinkingMode>>): AnthropicThinkingMode {
  for (const table of [overrides, DEFAULT_THINKING_MODES]) {
    if (!table) continue;
    for (const [glob, mode] of Object.entries(table)) if (matches(glob, model)) return mode;
  }
  return 'budget';
}
