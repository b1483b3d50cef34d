/**
 * @module customRules
 * Rules the user supplies for `--type custom` (`yard agent serve --rules
 * file.json`): a JSON spec, checked by a schema, turned into the same kind of
 * rules the shipped agent types have (see agentRules.ts).
 */
import { z } from 'zod';
import { AgentSessionError } from '../errors.js';
import { agentRules, bottomBoxStart } from './agentRules.js';
import { inputBoxStart, type MessageRules } from './messageRules.js';

/** A regular expression given as text: it must compile. */
const pattern = z
  .string()
  .min(1)
  .refine(
    (source) => {
      try {
        new RegExp(source, 'u');
        return true;
      } catch {
        return false;
      }
    },
    { message: 'not a valid regular expression' },
  );

/**
 * User-supplied rules for `--type custom` (`yard agent serve --rules file.json`): where the input
 * area starts, which lines are chrome, which say the agent is busy, the reply bullet and the prompt.
 */
export const CustomRulesSchema = z
  .object({
    description: z.string().optional(),
    extraction: z.enum(['screen', 'scrollback']).default('screen'),
    /** `bottom-box`: a ╭…╯ or ┌…┘ box at the bottom; `rule`: a `───` line with a `>` line under it; `none`. */
    input_box: z.enum(['bottom-box', 'rule', 'none']).default('bottom-box'),
    chrome: z.array(pattern).default([]),
    busy: z.array(pattern).default([]),
    bullet: pattern.optional(),
    prompt: pattern.optional(),
  })
  .strict();

export type CustomRulesSpec = z.input<typeof CustomRulesSchema>;

/**
 * Rules from a user's spec (parsed JSON). Throws `invalid_input` naming the field at fault.
 *
 * @example
 * ```ts
 * const rules = customAgentRules({ chrome: ['^Tokens: '], busy: ['Working…'], bullet: '^● ' });
 * ```
 */
export function customAgentRules(spec: unknown): MessageRules {
  const parsed = CustomRulesSchema.safeParse(spec);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join('.') || 'rules';
    throw new AgentSessionError('invalid_input', `custom rules: ${field}: ${issue.message}`, { field });
  }
  const rules = parsed.data;
  const inputBox =
    rules.input_box === 'bottom-box'
      ? bottomBoxStart
      : rules.input_box === 'rule'
        ? (lines: readonly string[]) => inputBoxStart(lines)
        : () => -1;
  const built = agentRules({
    kind: 'custom',
    description: rules.description ?? 'custom rules',
    extraction: rules.extraction,
    inputBox,
    chrome: rules.chrome.map((source) => new RegExp(source, 'u')),
    busy: rules.busy.map((source) => new RegExp(source, 'iu')),
    ...(rules.bullet ? { bullet: new RegExp(`^(\\s*)(?:${rules.bullet.replace(/^\^/u, '')})`, 'gmu') } : {}),
    ...(rules.prompt ? { prompt: new RegExp(rules.prompt, 'u') } : {}),
  });
  if (rules.input_box !== 'none') return built;
  // No input area to find: readiness cannot be read from the screen, the quiet window decides.
  const { ready: _unreadable, ...withoutReadiness } = built;
  return withoutReadiness;
}
