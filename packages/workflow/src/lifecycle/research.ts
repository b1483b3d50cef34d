/**
 * @module research
 * `research`: writes `<slug>/research.md`, what an implementer should know
 * before planning: the spec, the files and symbols of the repository it
 * touches (names from the spec, found with `git grep`), and the recent
 * history of those files (`git log`). With a gateway the model drafts the
 * note from that material; without one a template lays it out. The
 * material itself is always appended, so the note never rests on the
 * model's word alone.
 */

import { planFeatureMove } from '../domain/stateMachine.js';
import type { Artifact, ArtifactStore } from '../git/artifactStore.js';
import type { GitRepository } from '../git/gitRepository.js';
import type { GatewayClient } from '../llm/gatewayClient.js';
import type { FeatureTransitionResult, Workflow } from '../workflow.js';
import { featureSpec } from './spec.js';

/** One place a term of the spec occurs. */
export interface CodeHit {
  term: string;
  file: string;
  line: number;
  text: string;
}

/** What the research found. */
export interface ResearchMaterial {
  spec: string;
  terms: string[];
  hits: CodeHit[];
  files: string[];
  history: { commit: string; date: string; author: string; subject: string }[];
}

const MAX_TERMS = 20;
const MAX_HITS = 60;
const MAX_FILES = 20;

/**
 * The names a spec mentions that may be in the code: anything in backticks, paths, and identifiers
 * written like code (`camelCase`, `PascalCase` with an inner capital, `snake_case`).
 *
 * @example
 * ```ts
 * specTerms('Add `loginForm` to src/login.ts and rename session_store'); // ['loginForm', 'src/login.ts', 'session_store']
 * ```
 */
export function specTerms(spec: string): string[] {
  const terms: string[] = [];
  const add = (t: string) => {
    const term = t.trim();
    if (term.length >= 3 && term.length <= 80 && !term.startsWith('-') && !terms.includes(term)) terms.push(term);
  };
  for (const m of spec.matchAll(/`([^`\n]+)`/g)) add(m[1]!);
  const prose = spec.replace(/`[^`\n]*`/g, ' ');
  for (const m of prose.matchAll(
    /(?:^|\s)((?:[\w.-]+\/)+[\w.-]+|[\w-]+\.(?:ts|tsx|js|mjs|py|go|rs|java|rb|md|json|ya?ml))(?=[\s,.;:)]|$)/g,
  ))
    add(m[1]!.replace(/[.,;:]+$/, ''));
  for (const m of prose.matchAll(/\b([a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[a-z][a-z0-9]*_[a-z0-9_]+)\b/g)) add(m[1]!);
  return terms.slice(0, MAX_TERMS);
}

/** Gathers the material: where the spec's terms occur, and the history of those files. */
export async function gatherResearch(git: GitRepository, spec: string): Promise<ResearchMaterial> {
  const terms = specTerms(spec);
  const hits: CodeHit[] = [];
  for (const term of terms) {
    if (hits.length >= MAX_HITS) break;
    // git grep exits 1 when nothing matches: that is an empty answer, not a failure.
    const out = await git.run(['grep', '-n', '-I', '-F', '--max-count', '3', '-e', term, '--']).catch(() => '');
    for (const line of out.split('\n')) {
      const m = /^([^:]+):(\d+):(.*)$/.exec(line);
      if (!m || m[1]!.startsWith('.agileplus/')) continue;
      hits.push({ term, file: m[1]!, line: Number(m[2]), text: m[3]!.trim().slice(0, 200) });
      if (hits.length >= MAX_HITS) break;
    }
  }
  const files = [...new Set(hits.map((h) => h.file))].slice(0, MAX_FILES);
  const history: ResearchMaterial['history'] = [];
  if (files.length > 0) {
    const out = await git.run(['log', '-n', '20', '--date=short', '--format=%h%x09%ad%x09%an%x09%s', '--', ...files]).catch(() => '');
    for (const line of out.split('\n').filter(Boolean)) {
      const [commit, date, author, ...subject] = line.split('\t');
      history.push({ commit: commit!, date: date!, author: author!, subject: subject.join('\t') });
    }
  }
  return { spec, terms, hits, files, history };
}

/** The material as Markdown: what the template shows, and what follows a model's draft. */
export function materialMarkdown(m: ResearchMaterial): string {
  const lines = ['## Files and symbols the spec touches', ''];
  if (m.hits.length === 0)
    lines.push(
      m.terms.length ? `None of ${m.terms.map((t) => `\`${t}\``).join(', ')} occurs in tracked files yet.` : 'The spec names no code.',
    );
  for (const file of m.files) {
    lines.push(`- \`${file}\``);
    for (const h of m.hits.filter((x) => x.file === file))
      lines.push(`  - line ${h.line} (\`${h.term}\`): \`${h.text.replaceAll('`', "'")}\``);
  }
  lines.push('', '## Related history', '');
  if (m.history.length === 0) lines.push('No commits touch those files.');
  for (const c of m.history) lines.push(`- ${c.commit} ${c.date} ${c.author}: ${c.subject}`);
  return lines.join('\n');
}

/** Options of {@link researchFeature}. */
export interface ResearchOptions {
  workflow: Workflow;
  git: GitRepository;
  artifacts: ArtifactStore;
  actor: string;
  gateway?: GatewayClient;
  signal?: AbortSignal;
}

/**
 * Writes `<slug>/research.md` and moves the feature to RESEARCHED.
 *
 * @example
 * ```ts
 * const { artifact } = await researchFeature('login', { workflow, git, artifacts, actor: 'alice' });
 * ```
 */
export async function researchFeature(
  slug: string,
  options: ResearchOptions,
): Promise<{ artifact: Artifact; material: ResearchMaterial; drafted_by: 'llm' | 'template'; transition: FeatureTransitionResult }> {
  const feature = await options.workflow.getFeature(slug);
  planFeatureMove(feature.state, 'RESEARCHED', false);
  const spec = await featureSpec(options.workflow, slug);
  const material = await gatherResearch(options.git, spec);
  const facts = materialMarkdown(material);
  let body: string;
  if (options.gateway) {
    const draft = await options.gateway.complete(
      [
        {
          role: 'system',
          content:
            'You write the research note for a software feature before it is planned: what the change needs, which existing code it touches, risks and open questions. Markdown, no preamble, at most 600 words. Rely only on the material given.',
        },
        { role: 'user', content: `Feature ${slug}: ${feature.title}\n\n## Spec\n\n${spec}\n\n${facts}` },
      ],
      options.signal ? { signal: options.signal } : {},
    );
    body = `${draft.trim()}\n\n---\n\n${facts}`;
  } else {
    body = ['## Spec', '', spec.trim() || '(no spec yet: `yard specify --description` or `--from-file` adds one)', '', facts].join('\n');
  }
  const content = `# Research: ${feature.title} (${slug})\n\n${body}\n`;
  const artifact = await options.artifacts.write(slug, 'research.md', content);
  const transition = await options.workflow.advance(slug, 'research', { actor: options.actor });
  return { artifact, material, drafted_by: options.gateway ? 'llm' : 'template', transition };
}
