/**
 * @module retrospective
 * `retrospective`: writes `<slug>/retrospective.md` from what the feature
 * went through: the time it spent in each state and the review cycles of
 * each work package (both read off its audit trail), the moves the gates
 * refused (recorded in the trail as `gate_refused`), and how its agent jobs
 * ended. Then it moves the feature to RETROSPECTED.
 */

import type { AuditTrailEntry } from '../domain/model.js';
import type { AgentJob } from '../domain/records.js';
import { planFeatureMove } from '../domain/stateMachine.js';
import type { Artifact, ArtifactStore } from '../git/artifactStore.js';
import type { FeatureTransitionResult, Workflow } from '../workflow.js';

/** What the retrospective found. */
export interface RetrospectiveFacts {
  /** Milliseconds in each feature state, in the order the states were entered (the current one up to now). */
  time_in_state: { state: string; entered_at: string; ms: number }[];
  /** Per work package: reviews (moves to REVIEW) and reviews that asked for changes (REVIEW -> DOING). */
  review_cycles: { wp_sequence: number; reviews: number; changes_requested: number; final_state: string }[];
  gate_refusals: { at: string; wp_sequence: number | null; attempted: string; rule_ids: string[]; actor: string }[];
  jobs: { id: string; wp_sequence: number; state: string; outcome: string | null; review_cycles: number; ms: number | null }[];
}

/** Reads the facts off a trail and the feature's jobs, as of `now` (epoch ms). */
export function retrospectiveFacts(entries: readonly AuditTrailEntry[], jobs: readonly AgentJob[], now: number): RetrospectiveFacts {
  const featureMoves = entries.filter((e) => e.wp_sequence === null && (e.action === 'transition' || e.action === 'feature_created'));
  const time_in_state = featureMoves.map((e, i) => {
    const entered = Date.parse(e.timestamp);
    const left = i + 1 < featureMoves.length ? Date.parse(featureMoves[i + 1]!.timestamp) : now;
    return { state: e.transition.split(' -> ')[1]!, entered_at: e.timestamp, ms: Math.max(0, left - entered) };
  });
  const sequences = [...new Set(entries.flatMap((e) => (e.wp_sequence === null ? [] : [e.wp_sequence])))].sort((a, b) => a - b);
  const review_cycles = sequences.map((seq) => {
    const moves = entries.filter((e) => e.wp_sequence === seq && e.action === 'transition');
    return {
      wp_sequence: seq,
      reviews: moves.filter((e) => e.transition.endsWith('-> REVIEW')).length,
      changes_requested: moves.filter((e) => e.transition === 'REVIEW -> DOING').length,
      final_state: moves.at(-1)?.transition.split(' -> ')[1] ?? 'PLANNED',
    };
  });
  const gate_refusals = entries
    .filter((e) => e.action === 'gate_refused')
    .map((e) => ({
      at: e.timestamp,
      wp_sequence: e.wp_sequence,
      attempted: String(e.detail?.attempted ?? e.transition),
      rule_ids: Array.isArray(e.detail?.rule_ids) ? (e.detail.rule_ids as string[]) : [],
      actor: e.actor,
    }));
  const jobList = [...jobs]
    .sort((a, b) => a.created_at.localeCompare(b.created_at))
    .map((j) => ({
      id: j.id,
      wp_sequence: j.wp_sequence,
      state: j.state,
      outcome: j.outcome,
      review_cycles: j.review_cycles,
      ms: j.started_at && j.finished_at ? Date.parse(j.finished_at) - Date.parse(j.started_at) : null,
    }));
  return { time_in_state, review_cycles, gate_refusals, jobs: jobList };
}

function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  const m = Math.round(s / 60);
  return m < 120 ? `${m} min` : `${(m / 60).toFixed(1)} h`;
}

/** The facts as Markdown. */
export function retrospectiveMarkdown(title: string, slug: string, f: RetrospectiveFacts): string {
  const lines = [`# Retrospective: ${title} (${slug})`, '', '## Time in each state', '', '| state | entered | time |', '|---|---|---|'];
  for (const t of f.time_in_state) lines.push(`| ${t.state} | ${t.entered_at} | ${duration(t.ms)} |`);
  lines.push('', '## Review cycles per work package', '');
  if (f.review_cycles.length === 0) lines.push('No work packages.');
  else {
    lines.push('| work package | reviews | changes requested | final state |', '|---|---|---|---|');
    for (const r of f.review_cycles) lines.push(`| ${r.wp_sequence} | ${r.reviews} | ${r.changes_requested} | ${r.final_state} |`);
  }
  lines.push('', '## Gate refusals', '');
  if (f.gate_refusals.length === 0) lines.push('None.');
  for (const g of f.gate_refusals)
    lines.push(
      `- ${g.at}${g.wp_sequence !== null ? ` wp${g.wp_sequence}` : ''}: ${g.attempted} refused by ${g.rule_ids.join(', ')} (${g.actor})`,
    );
  lines.push('', '## Agent jobs', '');
  if (f.jobs.length === 0) lines.push('No agent jobs ran.');
  else {
    lines.push('| job | work package | state | outcome | review cycles | ran for |', '|---|---|---|---|---|---|');
    for (const j of f.jobs)
      lines.push(
        `| ${j.id.slice(0, 8)} | ${j.wp_sequence} | ${j.state} | ${j.outcome ?? ''} | ${j.review_cycles} | ${j.ms === null ? '' : duration(j.ms)} |`,
      );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Writes `<slug>/retrospective.md` for a SHIPPED feature and moves it to RETROSPECTED.
 *
 * @example
 * ```ts
 * const { facts } = await retrospectiveFeature('login', { workflow, artifacts, actor: 'alice' });
 * ```
 */
export async function retrospectiveFeature(
  slug: string,
  options: { workflow: Workflow; artifacts: ArtifactStore; actor: string },
): Promise<{ artifact: Artifact; facts: RetrospectiveFacts; transition: FeatureTransitionResult }> {
  const { workflow } = options;
  const feature = await workflow.getFeature(slug);
  planFeatureMove(feature.state, 'RETROSPECTED', false);
  const entries = await workflow.audit.entries(slug);
  const jobs = await workflow.store.reader.listJobs({ featureSlug: slug });
  const facts = retrospectiveFacts(entries, jobs, workflow.clock.now());
  const artifact = await options.artifacts.write(slug, 'retrospective.md', retrospectiveMarkdown(feature.title, slug, facts));
  const transition = await workflow.advance(slug, 'retrospective', { actor: options.actor });
  return { artifact, facts, transition };
}
