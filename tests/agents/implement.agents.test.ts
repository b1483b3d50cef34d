/**
 * `yard implement` with a real coding agent (issue 25): Codex and Claude
 * Code, pinned in test-support, run headless as the process agent in the
 * work package's worktree, their model scripted behind a real gateway on
 * loopback (implementWithAgent.ts). Two review cycles: the agent writes and
 * commits the module; the local CI command runs on that commit and the
 * heuristic reviewer asks for a test; told so in its next task, the agent
 * writes and commits the test; CI and the reviewer approve, and the package
 * is DONE. Checked from the repository and the store, as a user would:
 * the commits on the package's branch in its worktree, the evidence and
 * the review for each head, the audited moves, and the chain verifying.
 * Minutes on a loaded machine, so with the agent matrix (`pnpm test:agents`).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, describe, test } from 'node:test';
import { openRuntime } from '@switchyard/cli';
import { type AgentCliName, requireAgentCli } from '@switchyard/test-support';
import {
  AGENT_AUTHOR,
  BRANCH,
  FINAL_TEXT,
  type ImplementSetting,
  prepareImplement,
  SLUG,
  toolResults,
  WORKTREE,
  type YardRun,
} from './implementWithAgent.js';

const enabled = process.env.SWITCHYARD_AGENT_MATRIX === '1';
const settings: ImplementSetting[] = [];
after(async () => {
  for (const setting of settings) await setting.stop();
});

function transcript(setting: ImplementSetting, run: YardRun): string {
  const requests = setting.model.requests.map((r, i) => `#${i} tools=${r.tools.length} results=${JSON.stringify(toolResults(r.body))}`);
  return [`exit ${run.code}`, `--- stdout\n${run.stdout}`, `--- stderr\n${run.stderr}`, `--- model requests\n${requests.join('\n')}`].join(
    '\n',
  );
}

const CLIS: [AgentCliName, string][] = [
  ['codex', 'OpenAI Codex'],
  ['claude', 'Claude Code'],
];

// SWITCHYARD_AGENT_MATRIX_CLIENTS=codex runs one, as in the agent matrix.
const only = (process.env.SWITCHYARD_AGENT_MATRIX_CLIENTS ?? '').split(',').filter(Boolean);
for (const [name, title] of CLIS) {
  if (only.length > 0 && !only.includes(name)) continue;
  const cli = requireAgentCli(name);
  const skip = enabled ? cli.skip : 'the real-agent implement test runs with SWITCHYARD_AGENT_MATRIX=1 (`pnpm test:agents`)';
  describe(`yard implement with ${title} ${cli.available ? cli.version : ''} headless, through the gateway`, { skip }, () => {
    test('the agent commits on the package branch; CI and review run on its commits; changes requested, then DONE; all audited', {
      timeout: 600_000,
    }, async (t) => {
      const setting = await prepareImplement(name);
      settings.push(setting);
      const run = await setting.implement();
      const said = transcript(setting, run);
      assert.equal(run.code, 0, said);

      // The agent's two commits, on the package's branch, checked out in its worktree.
      const git = (...args: string[]) => execFileSync('git', args, { cwd: setting.root, encoding: 'utf8' }).trim();
      const commits = git('log', '--format=%H|%an|%s', `main..${BRANCH}`)
        .split('\n')
        .map((line) => line.split('|'));
      assert.deepEqual(
        commits.map(([, author, subject]) => [author, subject]),
        [
          [AGENT_AUTHOR, 'wp01: test greet'],
          [AGENT_AUTHOR, 'wp01: greet by name'],
        ],
        said,
      );
      const [tip, first] = [commits[0]![0]!, commits[1]![0]!];
      const worktree = `${setting.root}/${WORKTREE}`;
      assert.equal(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: worktree, encoding: 'utf8' }).trim(), tip);
      assert.equal(execFileSync('git', ['status', '--porcelain'], { cwd: worktree, encoding: 'utf8' }), '', 'the worktree is clean');
      assert.equal(git('show', `${BRANCH}:src/greet.mjs`), "export const greet = (name) => 'Hello, ' + name;");
      assert.match(git('show', `${BRANCH}:test/greet.test.mjs`), /assert\.equal\(greet\('Ada'\), 'Hello, Ada'\)/);
      assert.equal(git('rev-parse', 'main'), git('rev-parse', `${first}~1`), 'main is untouched: the work is on the branch');

      // Both turns went through the gateway to the scripted model, and the tool ran both times.
      const finished = setting.model.requests.filter((r) => toolResults(r.body).length > 0);
      assert.ok(finished.length >= 2, said);
      assert.match(run.stderr, /review cycle 2\/3/);

      const rt = await openRuntime(
        { verbose: 0, output: 'json', repo: setting.root },
        {
          stdout() {},
          stderr() {},
          readStdin: async () => Buffer.alloc(0),
          stdinIsTTY: false,
          env: {},
          cwd: setting.root,
        },
      );
      try {
        const jobs = await rt.store.reader.listJobs({ featureSlug: SLUG });
        assert.deepEqual(
          jobs.map((j) => [j.state, j.outcome, j.review_cycles, j.result?.commits]),
          [['Completed', 'approved', 2, [tip]]],
          said,
        );
        assert.equal((await rt.workflow.getWorkPackage(SLUG, 1)).state, 'DONE');
        // Local CI ran on each of the agent's heads, and the approval names the last.
        const evidence = await rt.workflow.records.listEvidence(SLUG, 1);
        const ci = evidence.filter((e) => e.type === 'ci_output');
        assert.deepEqual(
          ci.map((e) => [e.data?.commit, e.passed]),
          [
            [first, true],
            [tip, true],
          ],
        );
        // The reviewer judged the agent's diff: a test asked for on cycle 1, approval on cycle 2.
        const reviews = (await rt.store.reader.listAgentEvents({ jobId: jobs[0]!.id })).filter((e) => e.kind === 'review');
        assert.deepEqual(
          reviews.map((e) => [e.data.cycle, e.data.approved, e.data.comments]),
          [
            [1, false, ['Code changed (src/greet.mjs) but no test was added or updated.']],
            [2, true, []],
          ],
        );
        const approval = evidence.filter((e) => e.type === 'review_approval');
        assert.deepEqual(
          approval.map((e) => e.data?.commit),
          [tip],
        );
        // The audited moves, by whom.
        const trail = await rt.workflow.audit.entries(SLUG);
        const moves = trail.filter((e) => e.action === 'transition' && e.wp_sequence === 1).map((e) => `${e.transition} by ${e.actor}`);
        assert.deepEqual(moves, [
          'PLANNED -> DOING by agent:process',
          'DOING -> REVIEW by agent:process',
          'REVIEW -> DOING by reviewer:heuristic',
          'DOING -> REVIEW by agent:process',
          'REVIEW -> DONE by reviewer:heuristic',
        ]);
        const attached = trail.filter((e) => e.action === 'evidence_attached' && e.wp_sequence === 1).map((e) => e.actor);
        assert.deepEqual(attached, ['ci:local', 'ci:local', 'reviewer:heuristic']);
        const verified = await rt.workflow.audit.verify(SLUG);
        assert.equal(verified.valid, true, JSON.stringify(verified));
      } finally {
        await rt.close();
      }
      // The agent's last words (its output streams to stderr with -v).
      assert.ok(run.stderr.includes(FINAL_TEXT), said);
      t.diagnostic(`${setting.model.requests.length} model requests through the gateway`);
    });
  });
}
