/**
 * @module classifier
 * Triage: sorts an item into `bug`, `feature`, `idea` or `task` with a
 * confidence and a 0-100 priority. The default classifier is deterministic
 * and weighted (keyword and phrase weights, urgency modifiers); with a
 * gateway configured an LLM classifies instead, and any LLM failure falls
 * back to the weighted result, saying so.
 */
import { z } from 'zod';
import { ITEM_TYPES, type ItemType } from '../domain/records.js';
import { InvalidArgumentError } from '../errors.js';
import type { GatewayClient } from '../llm/gatewayClient.js';

/** A classification. */
export interface Classification {
  type: ItemType;
  /** 0-1: the winning type's share of the evidence. */
  confidence: number;
  /** 0-100, higher first. */
  priority: number;
  /** Weighted score of every type. */
  scores: Record<ItemType, number>;
  /** The cues that decided it (keywords, or the model's reasoning). */
  signals: string[];
  source: 'heuristic' | 'llm';
  /** Set when the LLM was configured but failed, and the weighted classifier answered. */
  fallback_reason?: string;
}

type Weights = [pattern: RegExp, weight: number, label: string][];

const w = (words: string, weight: number): Weights =>
  words.split(', ').map((word) => [new RegExp(`\\b${word.replace(/ /g, '\\s+')}\\b`, 'i'), weight, word] as [RegExp, number, string]);

/** The weights, per type. Phrases weigh more than single words. */
export const CLASSIFIER_WEIGHTS: Record<ItemType, Weights> = {
  bug: [
    ...w(
      "crash(es|ed|ing)?, exception, stack ?trace, regression, broken, bug, segfault, panic(s|ked)?, doesn't work, does not work, not working",
      3,
    ),
    ...w(
      'error(s)?, fail(s|ed|ing|ure)?, leak(s|ing)?, wrong, incorrect, unexpected(ly)?, fix, 500, 404, timeout(s)?, hang(s|ing)?, freez(e|es|ing)',
      2,
    ),
  ],
  feature: [
    ...w('feature, should be able to, add support, support for, as a user, new (endpoint|command|option|page)', 3),
    ...w('add, allow(s)?, implement, support, enable, integrate, integration, ability, provide, introduce', 2),
    ...w('new, option, endpoint, export, import', 1),
  ],
  idea: [
    ...w("idea, what if, would be nice, brainstorm, someday, wonder(ing)?, i wonder, might be cool, could we, it'd be cool", 3),
    ...w('maybe, consider, explore, experiment, perhaps, possibly, rethink, vision', 2),
    ...w('could, might', 1),
  ],
  task: [
    ...w('refactor, clean ?up, chore, bump, upgrade, dependabot, housekeeping, tech debt', 3),
    ...w('update, rename, migrate, document, docs, readme, configure, set up, setup, move, remove, delete, deprecate, ci, lint', 2),
    ...w('test(s)?, version', 1),
  ],
};

const BASE_PRIORITY: Record<ItemType, number> = { bug: 60, feature: 45, task: 35, idea: 20 };
const URGENCY: Weights = [
  ...w('security, vulnerability, cve, data loss, outage, production, prod, p0, sev ?1, critical, blocker, urgent, asap, customers?', 15),
  ...w('p1, important, high priority, soon, regression', 8),
];
const CALM: Weights = [...w('minor, cosmetic, typo, nice to have, low priority, trivial, p3, someday', -15)];

/** Ties go to the type listed first: a possible bug outranks a possible feature. */
const TIE_ORDER: ItemType[] = ['bug', 'feature', 'task', 'idea'];

function matchesOf(text: string, weights: Weights): [string, number][] {
  return weights.filter(([re]) => re.test(text)).map(([, weight, label]) => [label, weight]);
}

/**
 * The deterministic weighted classifier.
 *
 * @example
 * ```ts
 * classifyHeuristic('Checkout crashes with a 500 in production').type; // 'bug'
 * ```
 */
export function classifyHeuristic(text: string): Classification {
  if (typeof text !== 'string' || text.trim() === '') throw new InvalidArgumentError('text', 'nothing to triage');
  const scores = { bug: 0, feature: 0, idea: 0, task: 0 } as Record<ItemType, number>;
  const signals: string[] = [];
  for (const type of ITEM_TYPES) {
    for (const [label, weight] of matchesOf(text, CLASSIFIER_WEIGHTS[type])) {
      scores[type] += weight;
      signals.push(`${type}:${label}`);
    }
  }
  const total = ITEM_TYPES.reduce((n, t) => n + scores[t], 0);
  const type = total === 0 ? 'task' : TIE_ORDER.reduce((best, t) => (scores[t] > scores[best] ? t : best), TIE_ORDER[0]!);
  const confidence = total === 0 ? 0.25 : Math.round((scores[type] / total) * 100) / 100;
  let priority = BASE_PRIORITY[type];
  for (const [label, weight] of [...matchesOf(text, URGENCY), ...matchesOf(text, CALM)]) {
    priority += weight;
    signals.push(`priority:${label}`);
  }
  return { type, confidence, priority: Math.max(0, Math.min(100, priority)), scores, signals, source: 'heuristic' };
}

const llmAnswer = z.object({
  type: z.enum(ITEM_TYPES),
  confidence: z.number().min(0).max(1),
  priority: z.number().int().min(0).max(100),
  reasoning: z.string().max(2000).optional(),
});

const SYSTEM_PROMPT = `You triage items for a software team. Classify the item as exactly one of: bug (something broken), feature (a new capability someone asked for), idea (speculative, not yet a request), task (maintenance, chores, docs, upgrades).
Answer with one JSON object: {"type": "...", "confidence": 0..1, "priority": 0..100 (100 = drop everything), "reasoning": "one sentence"}.`;

/**
 * Classifies with the weighted classifier, or with an LLM through the
 * gateway when one is given.
 *
 * @example
 * ```ts
 * const triage = new Classifier({ gateway }); // or new Classifier() for the weighted one
 * const c = await triage.classify('Add SSO login for enterprise customers');
 * ```
 */
export class Classifier {
  constructor(private readonly options: { gateway?: GatewayClient } = {}) {}

  get mode(): 'heuristic' | 'llm' {
    return this.options.gateway ? 'llm' : 'heuristic';
  }

  async classify(text: string, options: { signal?: AbortSignal } = {}): Promise<Classification> {
    const heuristic = classifyHeuristic(text);
    const gateway = this.options.gateway;
    if (!gateway) return heuristic;
    try {
      const raw = await gateway.completeJson(
        [
          { role: 'system', content: SYSTEM_PROMPT },
          { role: 'user', content: text.slice(0, 20_000) },
        ],
        options,
      );
      const answer = llmAnswer.parse(raw);
      const scores = { bug: 0, feature: 0, idea: 0, task: 0, [answer.type]: answer.confidence } as Record<ItemType, number>;
      return {
        type: answer.type,
        confidence: answer.confidence,
        priority: answer.priority,
        scores,
        signals: answer.reasoning ? [answer.reasoning] : [],
        source: 'llm',
      };
    } catch (error) {
      return { ...heuristic, fallback_reason: `LLM triage failed, weighted classifier used: ${(error as Error).message}` };
    }
  }
}
