/**
 * @module stateMapping
 * Feature states to tracker state names and back, shared by every tracker
 * adapter. Several feature states may share one tracker state ("Todo");
 * read back, the earliest of them stands for it.
 */
import type { FeatureState } from '../domain/model.js';
import { InvalidArgumentError } from '../errors.js';

/** The default mapping of feature states to tracker states. */
export const DEFAULT_STATE_MAPPING: Record<FeatureState, string> = {
  CREATED: 'Backlog',
  SPECIFIED: 'Todo',
  RESEARCHED: 'Todo',
  PLANNED: 'Todo',
  IMPLEMENTING: 'In Progress',
  VALIDATED: 'In Review',
  SHIPPED: 'Done',
  RETROSPECTED: 'Done',
};

/**
 * @example
 * ```ts
 * const mapping = new StateMapping({ IMPLEMENTING: 'Doing' });
 * mapping.unmap('doing'); // 'IMPLEMENTING'
 * ```
 */
export class StateMapping {
  private readonly mapping: Record<FeatureState, string>;

  constructor(overrides: Partial<Record<FeatureState, string>> = {}) {
    this.mapping = { ...DEFAULT_STATE_MAPPING, ...overrides };
    for (const [state, remote] of Object.entries(this.mapping)) {
      if (typeof remote !== 'string' || remote === '')
        throw new InvalidArgumentError(`stateMapping.${state}`, 'must be a non-empty tracker state name');
    }
  }

  map(state: FeatureState): string {
    return this.mapping[state];
  }

  unmap(remote: string): FeatureState | undefined {
    return (Object.keys(this.mapping) as FeatureState[]).find((s) => this.mapping[s].toLowerCase() === remote.toLowerCase());
  }
}
