/**
 * @module waves
 * Orders a feature's work packages: explicit `depends_on` edges plus an
 * implicit edge from the lower to the higher sequence of any two packages
 * whose file scopes overlap (two agents must not edit one file at once).
 * Waves are the layers of the topological order: everything in a wave can
 * run in parallel once the waves before it are done.
 */
import { WorkflowError } from '../errors.js';

/** The part of a work package ordering needs. */
export interface Orderable {
  sequence: number;
  depends_on: readonly number[];
  file_scope: readonly string[];
}

function normalizeScope(path: string): string {
  return path.replace(/\\/g, '/').replace(/^\.\//, '').replace(/\/+$/, '');
}

/** True when two scope entries name the same file, or one is a directory containing the other. */
export function scopesOverlap(a: readonly string[], b: readonly string[]): boolean {
  for (const x of a.map(normalizeScope)) {
    for (const y of b.map(normalizeScope)) {
      if (x === y || x === '' || y === '' || y.startsWith(`${x}/`) || x.startsWith(`${y}/`)) return true;
    }
  }
  return false;
}

/** Every package's prerequisites: its `depends_on` plus lower sequences it shares files with. */
export function effectiveDependencies(packages: readonly Orderable[]): Map<number, Set<number>> {
  const known = new Set(packages.map((p) => p.sequence));
  const deps = new Map<number, Set<number>>();
  for (const p of packages) {
    const set = new Set<number>();
    for (const d of p.depends_on) {
      if (!known.has(d))
        throw new WorkflowError('invalid_argument', `work package ${p.sequence} depends on ${d}, which does not exist`, {
          details: { field: 'depends_on' },
        });
      if (d === p.sequence)
        throw new WorkflowError('invalid_argument', `work package ${p.sequence} depends on itself`, { details: { field: 'depends_on' } });
      set.add(d);
    }
    for (const q of packages) {
      if (q.sequence < p.sequence && p.file_scope.length > 0 && scopesOverlap(p.file_scope, q.file_scope)) set.add(q.sequence);
    }
    deps.set(p.sequence, set);
  }
  return deps;
}

/**
 * Groups packages into waves (Kahn's algorithm, sequences ascending within
 * a wave). Throws `invalid_argument` naming the packages of a cycle.
 *
 * @example
 * ```ts
 * computeWaves([
 *   { sequence: 1, depends_on: [], file_scope: ['src/a.ts'] },
 *   { sequence: 2, depends_on: [], file_scope: ['src/a.ts'] },
 *   { sequence: 3, depends_on: [], file_scope: ['src/b.ts'] },
 * ]); // [[1, 3], [2]]
 * ```
 */
export function computeWaves(packages: readonly Orderable[]): number[][] {
  const deps = effectiveDependencies(packages);
  const remaining = new Map([...deps].map(([k, v]) => [k, new Set(v)]));
  const waves: number[][] = [];
  while (remaining.size > 0) {
    const ready = [...remaining]
      .filter(([, d]) => d.size === 0)
      .map(([k]) => k)
      .sort((a, b) => a - b);
    if (ready.length === 0) {
      const cycle = [...remaining.keys()].sort((a, b) => a - b);
      throw new WorkflowError('invalid_argument', `work packages ${cycle.join(', ')} depend on each other in a cycle`, {
        details: { field: 'depends_on', cycle },
      });
    }
    for (const k of ready) remaining.delete(k);
    for (const d of remaining.values()) for (const k of ready) d.delete(k);
    waves.push(ready);
  }
  return waves;
}
