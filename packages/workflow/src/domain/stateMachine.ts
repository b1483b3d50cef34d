/**
 * @module stateMachine
 * The two state machines: the feature lifecycle (strictly forward, one step
 * per command, skips only with force) and the work-package machine (a fixed
 * set of moves). Pure functions: they decide, the workflow applies.
 */
import { InvalidArgumentError, WorkflowError } from '../errors.js';
import { FEATURE_STATES, type FeatureState, type WorkPackageState, WP_STATES } from './model.js';

/** The commands that move a feature, and the state each one reaches. */
export const FEATURE_COMMANDS = {
  specify: 'SPECIFIED',
  research: 'RESEARCHED',
  plan: 'PLANNED',
  implement: 'IMPLEMENTING',
  validate: 'VALIDATED',
  ship: 'SHIPPED',
  retrospective: 'RETROSPECTED',
} as const satisfies Record<string, FeatureState>;
export type FeatureCommand = keyof typeof FEATURE_COMMANDS;

/** Allowed work-package moves, as `from -> [to]`. */
export const WP_TRANSITIONS: Readonly<Record<WorkPackageState, readonly WorkPackageState[]>> = {
  PLANNED: ['DOING', 'BLOCKED'],
  DOING: ['REVIEW', 'BLOCKED'],
  REVIEW: ['DONE', 'DOING'],
  DONE: [],
  BLOCKED: ['PLANNED', 'DOING'],
};

/** Formats a transition string: `"PLANNED -> DOING"`. */
export function transitionString(from: string, to: string): string {
  return `${from} -> ${to}`;
}

/** Splits a transition string; throws `invalid_argument` on anything else. */
export function parseTransition(text: string, field = 'transition'): { from: string; to: string } {
  const match = /^([A-Z_]+) -> ([A-Z_]+)$/.exec(text);
  if (!match) throw new InvalidArgumentError(field, `expected "<FROM> -> <TO>", got ${JSON.stringify(text)}`);
  return { from: match[1]!, to: match[2]! };
}

export function isFeatureState(value: unknown): value is FeatureState {
  return typeof value === 'string' && (FEATURE_STATES as readonly string[]).includes(value);
}

export function isWorkPackageState(value: unknown): value is WorkPackageState {
  return typeof value === 'string' && (WP_STATES as readonly string[]).includes(value);
}

/** Parses a feature state name, case-insensitively (`planned` → `PLANNED`). */
export function toFeatureState(value: string, field = 'to'): FeatureState {
  const upper = value.toUpperCase();
  if (!isFeatureState(upper))
    throw new InvalidArgumentError(field, `unknown feature state ${JSON.stringify(value)}; one of ${FEATURE_STATES.join(', ')}`);
  return upper;
}

/** Parses a work-package state name, case-insensitively. */
export function toWorkPackageState(value: string, field = 'to'): WorkPackageState {
  const upper = value.toUpperCase();
  if (!isWorkPackageState(upper))
    throw new InvalidArgumentError(field, `unknown work-package state ${JSON.stringify(value)}; one of ${WP_STATES.join(', ')}`);
  return upper;
}

/** The plan for a feature move: the steps it passes through (for gates) and whether it skips any. */
export interface FeatureMovePlan {
  from: FeatureState;
  to: FeatureState;
  /** Each single step from `from` to `to`; gates of every step apply, so force skips steps but never gates. */
  steps: { from: FeatureState; to: FeatureState }[];
  /** States passed over without stopping (empty for a one-step move). */
  skipped: FeatureState[];
}

/**
 * Decides a feature move. One step forward is always allowed; more needs
 * `force`; staying put or going back is refused.
 *
 * @example
 * ```ts
 * planFeatureMove('CREATED', 'SPECIFIED', false).steps.length; // 1
 * planFeatureMove('CREATED', 'PLANNED', true).skipped; // ['SPECIFIED', 'RESEARCHED']
 * ```
 */
export function planFeatureMove(from: FeatureState, to: FeatureState, force: boolean): FeatureMovePlan {
  const a = FEATURE_STATES.indexOf(from);
  const b = FEATURE_STATES.indexOf(to);
  const transition = transitionString(from, to);
  if (b < a) {
    throw new WorkflowError('backward_transition', `features only move forward: ${transition} goes back`, {
      details: { from, to, transition },
    });
  }
  if (b === a) throw new WorkflowError('invalid_transition', `the feature is already ${to}`, { details: { from, to, transition } });
  if (b > a + 1 && !force) {
    throw new WorkflowError(
      'invalid_transition',
      `${transition} skips ${b - a - 1} step(s); pass force to skip, and the skip is recorded`,
      {
        details: { from, to, transition, next: FEATURE_STATES[a + 1] },
      },
    );
  }
  const steps = [];
  for (let i = a; i < b; i++) steps.push({ from: FEATURE_STATES[i]!, to: FEATURE_STATES[i + 1]! });
  return { from, to, steps, skipped: FEATURE_STATES.slice(a + 1, b) as FeatureState[] };
}

/** The state a command leads to, checked to be the next step from `from`. */
export function featureCommandTarget(command: string): FeatureState {
  if (!(command in FEATURE_COMMANDS)) {
    throw new InvalidArgumentError(
      'command',
      `unknown command ${JSON.stringify(command)}; one of ${Object.keys(FEATURE_COMMANDS).join(', ')}`,
    );
  }
  return FEATURE_COMMANDS[command as FeatureCommand];
}

/** Throws `invalid_transition` unless the work-package machine allows `from -> to`. */
export function assertWorkPackageMove(from: WorkPackageState, to: WorkPackageState): void {
  if (!WP_TRANSITIONS[from].includes(to)) {
    const allowed = WP_TRANSITIONS[from];
    throw new WorkflowError(
      'invalid_transition',
      `${transitionString(from, to)} is not allowed for a work package; from ${from} the moves are ${allowed.length ? allowed.join(', ') : 'none (DONE is final)'}`,
      { details: { from, to, transition: transitionString(from, to), allowed } },
    );
  }
}
