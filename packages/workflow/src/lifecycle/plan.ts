/**
 * @module plan
 * `plan`: decomposes a spec into work packages with dependencies, which
 * `implement` runs in waves. Through the gateway's model when one is
 * configured (a JSON answer, checked before anything is added: a bad one
 * is refused, never half applied); otherwise from the spec's task
 * checklist:
 *
 * ```md
 * - [ ] Login form (files: src/login.ts)
 * - [ ] Session API
 * - [ ] Wire the form to the API (after 1, 2)
 * ```
 *
 * Each unchecked item is a package, numbered from 1 in order; `(after 1,
 * 2)` names items above it that must be done first, and `(files: a, b)` its
 * file scope. Checked items (`- [x]`) are done and skipped.
 */
import { z } from 'zod';
import { relativePathSchema } from '../domain/inputs.js';
import type { WorkPackage } from '../domain/model.js';
import { WorkflowError } from '../errors.js';
import type { GatewayClient } from '../llm/gatewayClient.js';
import type { Workflow } from '../workflow.js';

/** One package of a plan; `depends_on` holds 1-based positions of packages above it in the same plan. */
export interface PlannedPackage {
  title: string;
  depends_on: number[];
  file_scope: string[];
}

const plannedPackage = z
  .object({
    title: z.string().trim().min(1).max(200),
    depends_on: z.array(z.number().int().positive()).default([]),
    file_scope: z.array(relativePathSchema).default([]),
  })
  .strict();

/** The answer the model must give. */
export const modelPlanSchema = z.object({ work_packages: z.array(plannedPackage).min(1).max(50) }).strict();

/** Refuses a dependency on a package that is not above (a forward or self reference would make no order). */
function checkOrder(packages: readonly PlannedPackage[], source: string): void {
  packages.forEach((p, i) => {
    for (const d of p.depends_on)
      if (d > i)
        throw new WorkflowError(
          'invalid_argument',
          `${source}: package ${i + 1} (${JSON.stringify(p.title)}) comes after ${d}, which is not above it`,
          { details: { field: 'depends_on' } },
        );
  });
}

/**
 * The packages of a spec's task checklist (see the module comment for the notation).
 *
 * @example
 * ```ts
 * checklistPlan('- [ ] A\n- [ ] B (after 1)'); // [{ title: 'A', … }, { title: 'B', depends_on: [1], … }]
 * ```
 */
export function checklistPlan(spec: string): PlannedPackage[] {
  const packages: PlannedPackage[] = [];
  for (const line of spec.split('\n')) {
    const item = /^\s*[-*+] \[ \] (.+?)\s*$/.exec(line);
    if (!item) continue;
    let title = item[1]!;
    const p: PlannedPackage = { title, depends_on: [], file_scope: [] };
    for (;;) {
      const note = /\s*\((after|files):\s*([^()]*)\)$/i.exec(title) ?? /\s*\((after)\s+([^()]*)\)$/i.exec(title);
      if (!note) break;
      const values = note[2]!
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean);
      if (note[1]!.toLowerCase() === 'after') {
        for (const v of values) {
          if (!/^\d+$/.test(v))
            throw new WorkflowError(
              'invalid_argument',
              `spec checklist: "(after ${note[2]})" names ${JSON.stringify(v)}, not an item number`,
              {
                details: { field: 'spec' },
              },
            );
          p.depends_on.push(Number(v));
        }
      } else p.file_scope.push(...values);
      title = title.slice(0, note.index);
    }
    p.title = title.trim();
    if (p.title) packages.push(p);
  }
  checkOrder(packages, 'spec checklist');
  return packages;
}

/** Asks the model for a plan; an answer that breaks `modelPlanSchema` or the order is refused. */
export async function modelPlan(gateway: GatewayClient, title: string, spec: string, signal?: AbortSignal): Promise<PlannedPackage[]> {
  const answer = await gateway.completeJson(
    [
      {
        role: 'system',
        content:
          'Split the feature into small work packages that one coding agent can each finish and that can be reviewed alone. Answer one JSON object: {"work_packages":[{"title": string, "depends_on": [numbers of packages above it, from 1], "file_scope": [repository-relative paths it edits]}]}. Nothing else.',
      },
      { role: 'user', content: `Feature: ${title}\n\n${spec}` },
    ],
    signal ? { signal } : {},
  );
  const parsed = modelPlanSchema.safeParse(answer);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new WorkflowError(
      'upstream_failed',
      `the model's plan was refused: ${issue.path.join('.') || '(answer)'}: ${issue.message}; nothing was added`,
      {
        details: { field: issue.path.join('.'), issues: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) },
      },
    );
  }
  const packages = parsed.data.work_packages;
  try {
    checkOrder(packages, "the model's plan");
  } catch (error) {
    throw new WorkflowError('upstream_failed', `${(error as Error).message}; nothing was added`, { cause: error });
  }
  return packages;
}

/**
 * Adds a plan's packages after the feature's existing ones, translating plan positions into sequences.
 *
 * @example
 * ```ts
 * await addPlannedPackages(workflow, 'login', checklistPlan(spec), 'alice');
 * ```
 */
export async function addPlannedPackages(
  workflow: Workflow,
  slug: string,
  packages: readonly PlannedPackage[],
  actor: string,
): Promise<WorkPackage[]> {
  const existing = await workflow.listWorkPackages(slug);
  const offset = existing.reduce((max, w) => Math.max(max, w.sequence), 0);
  const added: WorkPackage[] = [];
  for (const p of packages)
    added.push(
      await workflow.createWorkPackage(slug, {
        title: p.title,
        depends_on: p.depends_on.map((d) => d + offset),
        file_scope: p.file_scope,
        actor,
      }),
    );
  return added;
}
