/**
 * @module githubCodeHost
 * The code-host adapter for GitHub (and GitHub Enterprise) on
 * `@octokit/rest`: issues, pull requests, and CI read from both check runs
 * and commit statuses. Octokit's throttling plugin waits out primary and
 * secondary rate limits (within a bound), its retry plugin retries
 * transient failures, and every request goes through the SSRF-guarded
 * dispatcher. Authentication is one of {@link GitHubAuth}.
 */
import type { Octokit } from '@octokit/rest';
import type { CiStatus } from '../../agents/reviewers.js';
import { InvalidArgumentError, WorkflowError } from '../../errors.js';
import type { CodeHostAdapter, IssueContent, RemoteIssue } from '../adapters.js';
import { blockedAsWorkflowError, checkedBaseUrl, guardedDispatcher, guardedFetch, type OutboundPolicy } from '../outbound.js';
import { combineCi } from './ciStatus.js';
import { type GitHubAuth, readDeviceToken } from './githubAuth.js';

/** Options of {@link GitHubCodeHostAdapter}. */
export interface GitHubCodeHostOptions extends OutboundPolicy {
  /** API base (default `https://api.github.com`; `https://<host>/api/v3` for GitHub Enterprise Server). */
  baseUrl?: string;
  owner: string;
  repo: string;
  auth: GitHubAuth;
  /** Longest wait for a rate limit to reset before giving up (default 60 s). */
  maxRateLimitWaitSeconds?: number;
  /** Retries of a transient failure (default 3); 0 turns the retry plugin off. */
  retries?: number;
  /** The retry plugin's base delay: retry n waits n² times this (default 1000 ms). */
  retryBaseDelayMs?: number;
}

const NAME = /^[A-Za-z0-9_.-]{1,100}$/;
/** Octokit with the throttling and retry plugins (their methods are the plain client's). */
type Client = Octokit;

/** Octokit and its plugins, loaded on first use so that importing the workflow does not load them. */
async function loadOctokit() {
  const [{ Octokit: Base }, { throttling }, { retry }, { createAppAuth }] = await Promise.all([
    import('@octokit/rest'),
    import('@octokit/plugin-throttling'),
    import('@octokit/plugin-retry'),
    import('@octokit/auth-app'),
  ]);
  return { ThrottledOctokit: Base.plugin(throttling, retry), createAppAuth };
}

/**
 * GitHub issues, pull requests and CI for one repository.
 *
 * @example
 * ```ts
 * const host = new GitHubCodeHostAdapter({ owner: 'acme', repo: 'shop', auth: { type: 'token', token } });
 * const ci = await host.ciStatus('feature/001-login-wp01');
 * ```
 */
export class GitHubCodeHostAdapter implements CodeHostAdapter {
  private client: Promise<Client> | undefined;
  private readonly baseUrl: string;

  constructor(private readonly options: GitHubCodeHostOptions) {
    if (!NAME.test(options.owner)) throw new InvalidArgumentError('owner', 'not a valid owner name');
    if (!NAME.test(options.repo)) throw new InvalidArgumentError('repo', 'not a valid repository name');
    this.baseUrl = checkedBaseUrl('baseUrl', options.baseUrl ?? 'https://api.github.com', options);
    const auth = options.auth as { type: string };
    if (!['token', 'oauth_token', 'oauth_device', 'app'].includes(auth.type))
      throw new InvalidArgumentError('auth.type', 'one of token, oauth_device or app');
  }

  /** The Octokit client, built on first use (the device-flow token file is read then). */
  private octokit(): Promise<Client> {
    this.client ??= this.build().catch((error: unknown) => {
      this.client = undefined;
      throw error;
    });
    return this.client;
  }

  private async build(): Promise<Client> {
    const { ThrottledOctokit, createAppAuth } = await loadOctokit();
    const { auth } = this.options;
    const maxWait = this.options.maxRateLimitWaitSeconds ?? 60;
    const retries = this.options.retries ?? 3;
    const common = {
      baseUrl: this.baseUrl,
      userAgent: 'switchyard-workflow',
      request: { fetch: guardedFetch(guardedDispatcher(this.options)) },
      throttle: {
        // Wait out a limit once if it resets soon enough; otherwise fail with GitHub's answer.
        onRateLimit: (after: number, _options: unknown, _octokit: unknown, retryCount: number) => retryCount < 1 && after <= maxWait,
        onSecondaryRateLimit: (after: number, _options: unknown, _octokit: unknown, retryCount: number) =>
          retryCount < 1 && after <= maxWait,
      },
      // A 409 (a merge whose head moved) is an answer, not a hiccup: never retried.
      retry: {
        enabled: retries > 0,
        retries,
        retryAfterBaseValue: this.options.retryBaseDelayMs ?? 1000,
        doNotRetry: [400, 401, 403, 404, 409, 410, 422, 451],
      },
      // Failures reach the caller as errors; Octokit's own request log would print them a second time.
      log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    };
    if (auth.type === 'app') {
      return new ThrottledOctokit({
        ...common,
        authStrategy: createAppAuth,
        auth: { appId: auth.appId, privateKey: auth.privateKey, installationId: auth.installationId },
      });
    }
    const token = auth.type === 'oauth_device' ? (await readDeviceToken(auth.tokenFile, auth.clientId)).token : auth.token;
    return new ThrottledOctokit({ ...common, auth: token });
  }

  /**
   * Runs one call, turning Octokit's errors into workflow errors (never with the token in them). A 404
   * says what GitHub could not find: `missing` (the thing asked for), else the repository itself, which
   * GitHub also answers 404 for when the credentials may not see it.
   */
  private async call<T>(
    what: string,
    run: (octokit: Client, repo: { owner: string; repo: string }) => Promise<T>,
    missing?: string,
  ): Promise<T> {
    const octokit = await this.octokit();
    try {
      return await run(octokit, { owner: this.options.owner, repo: this.options.repo });
    } catch (error) {
      const blocked = blockedAsWorkflowError(error);
      if (blocked) throw blocked;
      const status = (error as { status?: unknown }).status;
      const message = (error as Error).message;
      if (status === 404) {
        const repository = `${this.options.owner}/${this.options.repo}`;
        const absent = `the repository ${repository} does not exist at ${this.baseUrl} or these credentials cannot see it (check the code host's owner, repo and token)`;
        throw new WorkflowError('not_found', `GitHub ${what}: not found: ${missing ? `${missing}, or ${absent}` : absent}`, {
          cause: error,
          details: { status, repository },
        });
      }
      throw new WorkflowError('upstream_failed', `GitHub ${what} failed${typeof status === 'number' ? ` (${status})` : ''}: ${message}`, {
        cause: error,
        ...(typeof status === 'number' ? { details: { status } } : {}),
      });
    }
  }

  private static issue(r: { number: number; title: string; body?: string | null; state: string; html_url: string }): RemoteIssue {
    return { id: String(r.number), title: r.title, description: r.body ?? '', state: r.state, url: r.html_url };
  }

  private static number(field: string, id: string): number {
    if (!/^\d{1,10}$/.test(id)) throw new InvalidArgumentError(field, 'an issue or pull request number');
    return Number(id);
  }

  /** GitHub issue states are `open` and `closed`; `content.state` is used as is. */
  async createIssue(content: IssueContent): Promise<RemoteIssue> {
    const { data } = await this.call('create issue', (o, r) =>
      o.rest.issues.create({ ...r, title: content.title, body: content.description }),
    );
    return GitHubCodeHostAdapter.issue(data);
  }

  async updateIssue(id: string, content: IssueContent): Promise<RemoteIssue> {
    const issue_number = GitHubCodeHostAdapter.number('id', id);
    const state = content.state === 'closed' ? 'closed' : 'open';
    const { data } = await this.call(
      'update issue',
      (o, r) => o.rest.issues.update({ ...r, issue_number, title: content.title, body: content.description, state }),
      `no issue #${issue_number}`,
    );
    return GitHubCodeHostAdapter.issue(data);
  }

  async getIssue(id: string): Promise<RemoteIssue> {
    const issue_number = GitHubCodeHostAdapter.number('id', id);
    const { data } = await this.call('get issue', (o, r) => o.rest.issues.get({ ...r, issue_number }), `no issue #${issue_number}`);
    return GitHubCodeHostAdapter.issue(data);
  }

  /** Comments on an issue or a pull request. */
  async commentOnIssue(id: string, body: string): Promise<{ id: string; url: string }> {
    const issue_number = GitHubCodeHostAdapter.number('id', id);
    const { data } = await this.call(
      'comment',
      (o, r) => o.rest.issues.createComment({ ...r, issue_number, body }),
      `no issue #${issue_number}`,
    );
    return { id: String(data.id), url: data.html_url };
  }

  async createPullRequest(input: { title: string; head: string; base: string; body: string }): Promise<{ number: number; url: string }> {
    const { data } = await this.call('create pull request', (o, r) => o.rest.pulls.create({ ...r, ...input }));
    return { number: data.number, url: data.html_url };
  }

  /** A pull request's state and head commit. */
  async getPullRequest(number: number): Promise<{ number: number; url: string; state: string; merged: boolean; head_sha: string }> {
    const { data } = await this.call(
      'get pull request',
      (o, r) => o.rest.pulls.get({ ...r, pull_number: number }),
      `no pull request #${number}`,
    );
    return { number: data.number, url: data.html_url, state: data.state, merged: data.merged, head_sha: data.head.sha };
  }

  /**
   * Merges a pull request. `sha` pins the head that was checked, so a push
   * after the checks passed makes GitHub refuse (409) instead of merging unchecked code.
   */
  async mergePullRequest(
    number: number,
    options: { method?: 'merge' | 'squash' | 'rebase'; sha?: string } = {},
  ): Promise<{ merged: boolean; sha: string }> {
    const { data } = await this.call(
      'merge pull request',
      (o, r) =>
        o.rest.pulls.merge({
          ...r,
          pull_number: number,
          merge_method: options.method ?? 'merge',
          ...(options.sha ? { sha: options.sha } : {}),
        }),
      `no pull request #${number}`,
    );
    return { merged: data.merged, sha: data.sha };
  }

  /**
   * CI of a commit or branch: its check runs (GitHub Actions and other
   * apps) and its commit statuses, folded by `combineCi`.
   */
  async ciStatus(ref: string, options: { signal?: AbortSignal } = {}): Promise<CiStatus> {
    if (!/^[A-Za-z0-9_./-]{1,250}$/.test(ref) || ref.startsWith('-') || ref.includes('..'))
      throw new InvalidArgumentError('ref', 'not a commit or branch');
    const request = options.signal ? { request: { signal: options.signal } } : {};
    const [runs, combined] = await this.call(
      'read CI',
      (o, r) =>
        Promise.all([
          o.paginate(o.rest.checks.listForRef, { ...r, ref, per_page: 100, ...request }),
          o.rest.repos.getCombinedStatusForRef({ ...r, ref, per_page: 100, ...request }),
        ]),
      `${this.options.owner}/${this.options.repo} has no commit ${ref} (GitHub runs CI only on what was pushed to it: push the branch to the remote that is this repository)`,
    );
    return combineCi(runs, combined.data.statuses);
  }
}
