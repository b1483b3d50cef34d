/**
 * @module @switchyard/workflow/git
 * The git repository and the content-addressed artifact store that the git
 * subcommands and the lifecycle steps run on. An embedder builds them for a
 * `SubcommandContext`; everything runs `git` with argument arrays and keeps
 * paths inside the repository.
 *
 * @example
 * ```ts
 * import { ArtifactStore, DEFAULT_ARTIFACT_ROOT, GitRepository } from '@switchyard/workflow/git';
 * const git = new GitRepository(repoRoot);
 * const artifacts = new ArtifactStore(join(repoRoot, DEFAULT_ARTIFACT_ROOT));
 * ```
 */

export { type Artifact, ArtifactStore, artifactHash, DEFAULT_ARTIFACT_ROOT } from './git/artifactStore.js';
export {
  type BranchInfo,
  type CommitInfo,
  type DiffStat,
  GIT_DEFAULTS,
  GitRepository,
  type StashEntry,
  type Worktree,
  workPackageBranch,
} from './git/gitRepository.js';
