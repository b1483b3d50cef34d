/**
 * @module gitSubcommands
 * The branch, commit, diff, stash and worktree subcommands. Documented
 * defaults: base `main`; diffs `HEAD~1`..`HEAD` with 3 context lines;
 * stash index 0 (the latest).
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../errors.js';
import { GIT_DEFAULTS } from '../git/gitRepository.js';
import { arg, defineSubcommand, legacySubcommand, type SubcommandDefinition } from './registry.js';

/**
 * A work package named by `wp_id`: its sequence, as `3`, `"3"`, `"03"` or `"wp03"`
 * (the branch spelling), so the id a worktree reports is accepted back.
 */
const wpId = () =>
  z
    .union([z.number().int().positive(), z.string().regex(/^(?:wp)?0*[1-9][0-9]*$/i, 'a work-package sequence such as 3 or wp03')])
    .transform((v) => (typeof v === 'number' ? v : Number(v.replace(/^wp/i, ''))))
    .describe('work package (sequence, e.g. 3 or wp03); recorded with the worktree');

/** `worktree:add` before the specification's arguments: a work package's worktree from its slug and sequence. */
const worktreeAddV1 = defineSubcommand({
  name: 'worktree:add',
  summary: "Add a work package's worktree (branch <slug>/wp<NN> at .worktrees/<slug>-wp<NN>)",
  args: z.object({
    feature_slug: arg.slug(),
    wp: arg.int('work-package sequence'),
    base: arg.text('branch to start from').default(GIT_DEFAULTS.base),
    path: arg.text('worktree directory (default .worktrees/<slug>-wp<NN>)').optional(),
    branch: arg.text('branch name (default <slug>/wp<NN>)').optional(),
  }),
  run: async (ctx, a) => {
    // A typo in the slug or sequence is not_found, not a stray branch and worktree for a package nobody planned.
    await ctx.workflow.getWorkPackage(a.feature_slug, a.wp);
    return ctx.git.addWorktree({
      featureSlug: a.feature_slug,
      wpSequence: a.wp,
      base: a.base,
      ...(a.path !== undefined ? { path: a.path } : {}),
      ...(a.branch !== undefined ? { branch: a.branch } : {}),
    });
  },
});

export const GIT_SUBCOMMANDS: SubcommandDefinition[] = [
  defineSubcommand({
    name: 'branch:create',
    documented: true,
    summary: 'Create a branch from a base (default main)',
    args: z.object({
      name: arg.text('branch name'),
      base: arg.text('branch, tag or commit to start from').default(GIT_DEFAULTS.base),
      checkout: arg.bool('switch to the new branch').default(false),
    }),
    run: (ctx, a) => ctx.git.createBranch(a.name, { base: a.base, checkout: a.checkout }),
  }),
  defineSubcommand({
    name: 'branch:checkout',
    documented: true,
    summary: 'Switch to a branch',
    args: z.object({ name: arg.text('branch name'), create: arg.bool('create it from the current commit first').default(false) }),
    run: (ctx, a) => ctx.git.checkoutBranch(a.name, { create: a.create }),
  }),
  defineSubcommand({
    name: 'branch:delete',
    documented: true,
    summary: 'Delete a branch (force deletes unmerged work; --remote deletes it on that remote)',
    args: z.object({
      name: arg.text('branch name'),
      force: arg.bool('delete even when not merged').default(false),
      remote: arg.text('delete the branch on this remote instead (e.g. origin)').optional(),
    }),
    run: (ctx, a) => ctx.git.deleteBranch(a.name, { force: a.force, ...(a.remote !== undefined ? { remote: a.remote } : {}) }),
  }),
  defineSubcommand({
    name: 'branch:list',
    documented: true,
    summary: 'List local branches (--remote: remote-tracking ones; --pattern: a glob)',
    args: z.object({
      pattern: arg.text('glob over branch names, e.g. "feat/*" (* stops at a slash)').optional(),
      remote: arg.bool('list remote-tracking branches (origin/…) instead').default(false),
    }),
    run: (ctx, a) => ctx.git.listBranches({ remote: a.remote, ...(a.pattern !== undefined ? { pattern: a.pattern } : {}) }),
  }),
  defineSubcommand({
    name: 'branch:rename',
    summary: 'Rename a branch',
    args: z.object({ from: arg.text('current name'), to: arg.text('new name') }),
    run: (ctx, a) => ctx.git.renameBranch(a.from, a.to),
  }),
  defineSubcommand({
    name: 'branch:current',
    summary: 'The checked-out branch (null when detached)',
    args: z.object({}),
    run: async (ctx) => ({ branch: await ctx.git.currentBranch() }),
  }),
  defineSubcommand({
    name: 'commit:create',
    documented: true,
    summary: 'Commit changes (all by default, or only the given files)',
    args: z.object({
      message: arg.text('commit message'),
      all: arg.bool('stage every change first').default(true),
      files: arg.list('stage only these paths (comma separated)').default([]),
      author: arg.text('author as "Name <email>" (default: the configured git identity)').optional(),
      allow_empty: arg.bool('commit even with no changes').default(false),
    }),
    aliases: { paths: 'files' },
    run: (ctx, a) =>
      ctx.git.commit(a.message, {
        all: a.all,
        paths: a.files,
        allowEmpty: a.allow_empty,
        ...(a.author !== undefined ? { author: a.author } : {}),
      }),
  }),
  defineSubcommand({
    name: 'commit:amend',
    documented: true,
    summary: 'Amend the last commit (keeps its message unless one is given)',
    args: z.object({
      message: arg.text('new message').optional(),
      all: arg.bool('stage every change first').default(true),
      allow_empty: arg.bool('amend even when the commit is left with no changes').default(false),
    }),
    run: (ctx, a) => ctx.git.amend({ ...(a.message !== undefined ? { message: a.message } : {}), all: a.all, allowEmpty: a.allow_empty }),
  }),
  defineSubcommand({
    name: 'commit:fixup',
    documented: true,
    summary: 'Commit changes as a fixup of a commit',
    args: z.object({
      target: arg.text('commit to fix up'),
      message: arg.text("explanation, in the fixup's body").optional(),
      all: arg.bool('stage every change first').default(true),
    }),
    run: (ctx, a) => ctx.git.fixup(a.target, { all: a.all, ...(a.message !== undefined ? { message: a.message } : {}) }),
  }),
  defineSubcommand({
    name: 'commit:rebase',
    documented: true,
    summary: 'Rebase the current branch onto a base (default main), squashing fixups',
    args: z.object({
      onto: arg.text('base to rebase onto').default(GIT_DEFAULTS.base),
      autosquash: arg.bool('squash fixup! commits').default(true),
    }),
    run: (ctx, a) => ctx.git.rebase({ onto: a.onto, autosquash: a.autosquash }),
  }),
  defineSubcommand({
    name: 'commit:log',
    summary: 'Recent commits, newest first',
    args: z.object({ limit: arg.int('how many').default(GIT_DEFAULTS.logLimit), rev: arg.text('start from').default('HEAD') }),
    run: (ctx, a) => ctx.git.log({ limit: a.limit, rev: a.rev }),
  }),
  defineSubcommand({
    name: 'commit:show',
    summary: 'One commit with its patch',
    args: z.object({
      rev: arg.text('commit to show').default('HEAD'),
      context: arg.int('context lines').default(GIT_DEFAULTS.contextLines),
    }),
    run: async (ctx, a) => {
      const [commit] = await ctx.git.log({ limit: 1, rev: a.rev });
      return {
        ...commit,
        diff: await ctx.git.diff({ from: `${commit!.commit}~1`, to: commit!.commit, context: a.context }).catch(() => ''),
      };
    },
  }),
  defineSubcommand({
    name: 'diff:show',
    documented: true,
    summary: 'Unified diff between two revisions (--stat: the diffstat)',
    args: z.object({
      from: arg.text('old revision').default(GIT_DEFAULTS.diffFrom),
      to: arg.text('new revision').default(GIT_DEFAULTS.diffTo),
      stat: arg.bool("git's diffstat instead of the patch").default(false),
      unified: arg.int('context lines').default(GIT_DEFAULTS.contextLines),
      paths: arg.list('limit to these paths').default([]),
    }),
    aliases: { context: 'unified' },
    run: async (ctx, a) => ({
      from: a.from,
      to: a.to,
      unified: a.unified,
      stat: a.stat,
      diff: await ctx.git.diff({ from: a.from, to: a.to, paths: a.paths, context: a.unified, stat: a.stat, field: 'unified' }),
    }),
  }),
  defineSubcommand({
    name: 'diff:stat',
    documented: true,
    summary: 'Files changed with insertions and deletions',
    args: z.object({
      from: arg.text('old revision').default(GIT_DEFAULTS.diffFrom),
      to: arg.text('new revision').default(GIT_DEFAULTS.diffTo),
      paths: arg.list('limit to these paths').default([]),
    }),
    run: (ctx, a) => ctx.git.diffStat(a),
  }),
  defineSubcommand({
    name: 'diff:files',
    summary: 'Names of the files changed between two revisions',
    args: z.object({
      from: arg.text('old revision').default(GIT_DEFAULTS.diffFrom),
      to: arg.text('new revision').default(GIT_DEFAULTS.diffTo),
    }),
    run: async (ctx, a) => (await ctx.git.diffStat(a)).files.map((f) => f.path),
  }),
  defineSubcommand({
    name: 'stash:push',
    documented: true,
    summary: 'Stash local changes',
    args: z.object({
      message: arg.text('stash message').optional(),
      include_untracked: arg.bool('stash untracked files too').default(false),
    }),
    run: (ctx, a) =>
      ctx.git.stashPush({ ...(a.message !== undefined ? { message: a.message } : {}), includeUntracked: a.include_untracked }),
  }),
  defineSubcommand({
    name: 'stash:pop',
    documented: true,
    summary: 'Apply and drop a stash (0 is the latest)',
    args: z.object({ index: arg.int('stash index').default(GIT_DEFAULTS.stashIndex) }),
    run: (ctx, a) => ctx.git.stashPop(a),
  }),
  defineSubcommand({
    name: 'stash:list',
    documented: true,
    summary: 'List stashes, latest first',
    args: z.object({}),
    run: (ctx) => ctx.git.stashList(),
  }),
  defineSubcommand({
    name: 'stash:apply',
    summary: 'Apply a stash and keep it',
    args: z.object({ index: arg.int('stash index').default(GIT_DEFAULTS.stashIndex) }),
    run: (ctx, a) => ctx.git.stashApply(a),
  }),
  defineSubcommand({
    name: 'stash:drop',
    summary: 'Drop a stash',
    args: z.object({ index: arg.int('stash index').default(GIT_DEFAULTS.stashIndex) }),
    run: (ctx, a) => ctx.git.stashDrop(a),
  }),
  defineSubcommand({
    name: 'stash:show',
    summary: 'The patch of a stash',
    args: z.object({ index: arg.int('stash index').default(GIT_DEFAULTS.stashIndex) }),
    run: async (ctx, a) => ({ index: a.index, patch: await ctx.git.stashShow(a) }),
  }),
  defineSubcommand({
    name: 'worktree:add',
    documented: true,
    summary: 'Add a worktree at --path on --branch (created from --base when new), recording its feature and work package',
    args: z.object({
      path: arg.text('worktree directory, inside the repository'),
      branch: arg.text('branch to check out there (created from base when it does not exist)'),
      feature_slug: arg.slug().optional(),
      wp_id: wpId().optional(),
      base: arg.text('branch to start a new branch from').default(GIT_DEFAULTS.base),
    }),
    aliases: { wp: 'wp_id' },
    run: async (ctx, a) => {
      if (a.wp_id !== undefined && a.feature_slug === undefined)
        throw new InvalidArgumentError('feature_slug', 'required with wp_id (a work package belongs to a feature)');
      // A typo in the slug or sequence is not_found, not a worktree recorded for a package nobody planned.
      if (a.wp_id !== undefined) await ctx.workflow.getWorkPackage(a.feature_slug!, a.wp_id);
      else if (a.feature_slug !== undefined) await ctx.workflow.getFeature(a.feature_slug);
      return ctx.git.addWorktree({
        path: a.path,
        branch: a.branch,
        base: a.base,
        metadata: {
          ...(a.feature_slug !== undefined ? { feature_slug: a.feature_slug } : {}),
          ...(a.wp_id !== undefined ? { wp_id: a.wp_id } : {}),
        },
      });
    },
  }),
  legacySubcommand(worktreeAddV1, 'worktree:add --path P --branch B --feature-slug F --wp-id N'),
  defineSubcommand({
    name: 'worktree:remove',
    documented: true,
    summary: 'Remove a worktree',
    args: z.object({ path: arg.text('worktree directory'), force: arg.bool('discard its local changes').default(false) }),
    run: (ctx, a) => ctx.git.removeWorktree(a.path, { force: a.force }),
  }),
  defineSubcommand({
    name: 'worktree:list',
    documented: true,
    summary: 'List worktrees with their feature and work package',
    args: z.object({}),
    run: (ctx) => ctx.git.listWorktrees(),
  }),
  defineSubcommand({
    name: 'worktree:prune',
    summary: 'Forget worktrees whose directories are gone',
    args: z.object({}),
    run: (ctx) => ctx.git.pruneWorktrees(),
  }),
];
