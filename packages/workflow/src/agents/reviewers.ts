/**
 * @module reviewers
 * Automated review of an agent's diff. The LLM reviewer asks a model
 * through the gateway's `/v1/chat/completions`; without one, the heuristic
 * reviewer judges diff size, whether tests were touched, lint and CI.
 */
import { z } from 'zod';
import type { DiffStat } from '../git/gitRepository.js';
import type { GatewayClient } from '../llm/gatewayClient.js';

/** CI state of a commit on the code host. */
export interface CiStatus {
  state: 'success' | 'failure' | 'pending' | 'error' | 'none';
  url: string | null;
  /** Individual checks, `context: state`. */
  checks: { context: string; state: string }[];
}

/** Something that reports CI for a commit (a `CodeHostAdapter`). */
export interface CiStatusSource {
  ciStatus(ref: string, options?: { signal?: AbortSignal }): Promise<CiStatus>;
}

/** What a reviewer sees. */
export interface ReviewInput {
  featureSlug: string;
  wpSequence: number;
  title: string;
  diff: string;
  stat: DiffStat;
  ci: CiStatus | null;
  /** `true`/`false` from the newest lint_result evidence of the package, `null` when none. */
  lintPassed: boolean | null;
  cycle: number;
}

export interface ReviewVerdict {
  approved: boolean;
  summary: string;
  /** What to change; fed back to the agent. */
  comments: string[];
  reviewer: 'llm' | 'heuristic';
}

export interface Reviewer {
  review(input: ReviewInput, options?: { signal?: AbortSignal }): Promise<ReviewVerdict>;
}

const TEST_FILE = /(^|\/)(tests?|__tests__|spec)(\/|$)|\.(test|spec)\.[a-z0-9]+$|_test\.[a-z0-9]+$/i;
const DOC_FILE = /\.(md|txt|rst|adoc)$|^docs\//i;

/**
 * Judges a diff without a model: not empty, not too large, tests touched
 * when code changed, lint and CI not failing.
 *
 * @example
 * ```ts
 * const reviewer = new HeuristicReviewer({ maxChangedLines: 400 });
 * ```
 */
export class HeuristicReviewer implements Reviewer {
  constructor(private readonly options: { maxChangedLines?: number; requireTests?: boolean } = {}) {}

  async review(input: ReviewInput): Promise<ReviewVerdict> {
    const comments: string[] = [];
    const max = this.options.maxChangedLines ?? 400;
    const changed = input.stat.insertions + input.stat.deletions;
    if (input.stat.files_changed === 0) comments.push('The change is empty: no files differ from the base.');
    if (changed > max) comments.push(`The diff changes ${changed} lines (limit ${max}); split the work into smaller packages.`);
    const code = input.stat.files.filter((f) => !TEST_FILE.test(f.path) && !DOC_FILE.test(f.path));
    const tests = input.stat.files.filter((f) => TEST_FILE.test(f.path));
    if ((this.options.requireTests ?? true) && code.length > 0 && tests.length === 0) {
      comments.push(`Code changed (${code.map((f) => f.path).join(', ')}) but no test was added or updated.`);
    }
    if (input.lintPassed === false) comments.push('Lint fails; fix the lint errors.');
    if (input.ci && (input.ci.state === 'failure' || input.ci.state === 'error')) {
      const failing = input.ci.checks.filter((c) => c.state === 'failure' || c.state === 'error').map((c) => c.context);
      comments.push(
        `CI is ${input.ci.state}${failing.length ? ` (${failing.join(', ')})` : ''}${input.ci.url ? `: ${input.ci.url}` : ''}.`,
      );
    }
    const approved = comments.length === 0;
    const summary = approved
      ? `Approved: ${input.stat.files_changed} file(s), +${input.stat.insertions}/-${input.stat.deletions}, tests touched.`
      : `Changes requested (${comments.length} issue(s)).`;
    return { approved, summary, comments, reviewer: 'heuristic' };
  }
}

const llmVerdict = z.object({
  verdict: z.enum(['approve', 'request_changes']),
  summary: z.string().max(4000),
  comments: z.array(z.string().max(4000)).max(50).default([]),
});

const REVIEW_PROMPT = `You review a change an automated coding agent made for one work package.
Approve only if the change does what the work package asks, is correct, is tested, and is safe.
Answer with one JSON object: {"verdict": "approve" | "request_changes", "summary": "one paragraph", "comments": ["one actionable request per item"]}.`;

/** Reviews with a model through the gateway; a failing model call falls back to the heuristic reviewer. */
export class LlmReviewer implements Reviewer {
  constructor(
    private readonly gateway: GatewayClient,
    private readonly fallback: Reviewer = new HeuristicReviewer(),
    private readonly maxDiffChars = 60_000,
  ) {}

  async review(input: ReviewInput, options: { signal?: AbortSignal } = {}): Promise<ReviewVerdict> {
    const diff = input.diff.length > this.maxDiffChars ? `${input.diff.slice(0, this.maxDiffChars)}\n[diff truncated]` : input.diff;
    const ci = input.ci
      ? `CI: ${input.ci.state}${input.ci.checks.length ? ` (${input.ci.checks.map((c) => `${c.context}=${c.state}`).join(', ')})` : ''}`
      : 'CI: not reported';
    try {
      const raw = await this.gateway.completeJson(
        [
          { role: 'system', content: REVIEW_PROMPT },
          {
            role: 'user',
            content: `Work package ${input.wpSequence} of ${input.featureSlug}: ${input.title}\nReview cycle ${input.cycle}\n${ci}\nLint: ${input.lintPassed === null ? 'not reported' : input.lintPassed ? 'passing' : 'failing'}\n\n${diff}`,
          },
        ],
        options,
      );
      const answer = llmVerdict.parse(raw);
      return { approved: answer.verdict === 'approve', summary: answer.summary, comments: answer.comments, reviewer: 'llm' };
    } catch (error) {
      const verdict = await this.fallback.review(input, options);
      return { ...verdict, summary: `${verdict.summary} (LLM review failed: ${(error as Error).message})` };
    }
  }
}
