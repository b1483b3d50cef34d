/**
 * @module adapters
 * The sync ports and their REST adapters: `TrackerAdapter` for the
 * project-management tool (REST, OAuth 2.0 client credentials, a
 * configurable state mapping) and `CodeHostAdapter` for GitHub-style
 * issues, pull requests and commit statuses.
 */

import type { CiStatus, CiStatusSource } from '../agents/reviewers.js';
import type { FeatureState } from '../domain/model.js';
import { InvalidArgumentError, WorkflowError } from '../errors.js';
import type { Clock } from '../util/clock.js';
import { jsonRequest, type OAuthClientCredentials, OAuthTokenSource } from './http.js';

/** An issue as a remote system holds it. */
export interface RemoteIssue {
  id: string;
  title: string;
  description: string;
  /** The remote's state name (`"In Progress"`, `"open"`). */
  state: string;
  url: string | null;
}

/** What sync writes to a remote issue. */
export interface IssueContent {
  title: string;
  description: string;
  state: string;
}

/** Port for the external project-management tool. */
export interface TrackerAdapter {
  /** Maps a feature state to the tracker's state name. */
  mapState(state: FeatureState): string;
  /** The feature state a tracker state stands for, if any. */
  unmapState(remote: string): FeatureState | undefined;
  createIssue(content: IssueContent): Promise<RemoteIssue>;
  updateIssue(id: string, content: IssueContent): Promise<RemoteIssue>;
  getIssue(id: string): Promise<RemoteIssue>;
}

/** Port for a GitHub-style code host. */
export interface CodeHostAdapter extends CiStatusSource {
  createIssue(content: IssueContent): Promise<RemoteIssue>;
  updateIssue(id: string, content: IssueContent): Promise<RemoteIssue>;
  getIssue(id: string): Promise<RemoteIssue>;
  createPullRequest(input: { title: string; head: string; base: string; body: string }): Promise<{ number: number; url: string }>;
  /**
   * Merges a pull request whose head is `sha` (refused by the host when the head moved); `ship` uses it once the
   * checks pass. Optional: `ship` through a host without it is refused as not_implemented.
   */
  mergePullRequest?(input: { number: number; sha: string }): Promise<{ sha: string }>;
}

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

/** Options of {@link RestTrackerAdapter}. */
export interface RestTrackerOptions {
  /** API base, e.g. `https://tracker.example/api/v1` (operator configuration). */
  baseUrl: string;
  oauth: OAuthClientCredentials;
  /** Feature state → tracker state; missing entries use {@link DEFAULT_STATE_MAPPING}. */
  stateMapping?: Partial<Record<FeatureState, string>>;
  clock?: Clock;
}

function joinUrl(base: string, path: string): URL {
  return new URL(path.replace(/^\//, ''), base.endsWith('/') ? base : `${base}/`);
}

/**
 * A tracker over REST: `POST /issues`, `PATCH /issues/{id}`, `GET /issues/{id}`
 * with `{id, title, description, state, url}` bodies, authorized with an
 * OAuth 2.0 client-credentials token (refreshed once on a 401).
 *
 * @example
 * ```ts
 * const tracker = new RestTrackerAdapter({ baseUrl, oauth: { tokenUrl, clientId, clientSecret }, stateMapping: { IMPLEMENTING: 'Doing' } });
 * ```
 */
export class RestTrackerAdapter implements TrackerAdapter {
  private readonly tokens: OAuthTokenSource;
  private readonly mapping: Record<FeatureState, string>;

  constructor(private readonly options: RestTrackerOptions) {
    this.tokens = new OAuthTokenSource(options.oauth, options.clock);
    this.mapping = { ...DEFAULT_STATE_MAPPING, ...options.stateMapping };
    for (const [state, remote] of Object.entries(this.mapping)) {
      if (typeof remote !== 'string' || remote === '')
        throw new InvalidArgumentError(`stateMapping.${state}`, 'must be a non-empty tracker state name');
    }
  }

  mapState(state: FeatureState): string {
    return this.mapping[state];
  }

  unmapState(remote: string): FeatureState | undefined {
    // Several feature states may share a tracker state; the earliest one stands for it.
    return (Object.keys(this.mapping) as FeatureState[]).find((s) => this.mapping[s].toLowerCase() === remote.toLowerCase());
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const attempt = async (refresh: boolean) =>
      jsonRequest<T>(method, joinUrl(this.options.baseUrl, path), {
        headers: { authorization: `Bearer ${await this.tokens.token(refresh)}` },
        body,
      });
    try {
      return (await attempt(false)).body;
    } catch (error) {
      if (error instanceof WorkflowError && error.details?.status === 401) return (await attempt(true)).body;
      throw error;
    }
  }

  private issue(raw: unknown): RemoteIssue {
    const r = raw as Record<string, unknown>;
    if (!r || (typeof r.id !== 'string' && typeof r.id !== 'number') || typeof r.title !== 'string')
      throw new WorkflowError('upstream_failed', 'the tracker answered with something that is not an issue');
    return {
      id: String(r.id),
      title: r.title,
      description: typeof r.description === 'string' ? r.description : '',
      state: String(r.state ?? ''),
      url: typeof r.url === 'string' ? r.url : null,
    };
  }

  async createIssue(content: IssueContent) {
    return this.issue(await this.call('POST', 'issues', content));
  }
  async updateIssue(id: string, content: IssueContent) {
    return this.issue(await this.call('PATCH', `issues/${encodeURIComponent(id)}`, content));
  }
  async getIssue(id: string) {
    return this.issue(await this.call('GET', `issues/${encodeURIComponent(id)}`));
  }
}

/** How the code-host adapter authenticates as an OAuth app: with a token the app obtained, or with the app's own id and secret. */
export type CodeHostAuth = { type: 'oauth_token'; token: string } | { type: 'oauth_app'; clientId: string; clientSecret: string };

/** Options of {@link GitHubCodeHostAdapter}. */
export interface GitHubCodeHostOptions {
  /** API base (default `https://api.github.com`; a GitHub Enterprise or a local fake in tests). */
  baseUrl?: string;
  owner: string;
  repo: string;
  auth: CodeHostAuth;
}

const NAME = /^[A-Za-z0-9_.-]{1,100}$/;

/**
 * GitHub-style issues, pull requests and combined commit status.
 *
 * @example
 * ```ts
 * const host = new GitHubCodeHostAdapter({ owner: 'acme', repo: 'shop', auth: { type: 'oauth_token', token } });
 * const ci = await host.ciStatus('main');
 * ```
 */
export class GitHubCodeHostAdapter implements CodeHostAdapter {
  private readonly base: string;

  constructor(private readonly options: GitHubCodeHostOptions) {
    if (!NAME.test(options.owner)) throw new InvalidArgumentError('owner', 'not a valid owner name');
    if (!NAME.test(options.repo)) throw new InvalidArgumentError('repo', 'not a valid repository name');
    this.base = `${(options.baseUrl ?? 'https://api.github.com').replace(/\/$/, '')}/repos/${options.owner}/${options.repo}/`;
  }

  private headers(): Record<string, string> {
    const auth = this.options.auth;
    const authorization =
      auth.type === 'oauth_token'
        ? `Bearer ${auth.token}`
        : `Basic ${Buffer.from(`${auth.clientId}:${auth.clientSecret}`).toString('base64')}`;
    return {
      authorization,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'switchyard-workflow',
    };
  }

  private async call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    return (await jsonRequest<T>(method, new URL(path, this.base), { headers: this.headers(), body, ...(signal ? { signal } : {}) })).body;
  }

  private issue(raw: unknown): RemoteIssue {
    const r = raw as { number?: unknown; title?: unknown; body?: unknown; state?: unknown; html_url?: unknown };
    if (typeof r?.number !== 'number' || typeof r.title !== 'string')
      throw new WorkflowError('upstream_failed', 'the code host answered with something that is not an issue');
    return {
      id: String(r.number),
      title: r.title,
      description: typeof r.body === 'string' ? r.body : '',
      state: String(r.state ?? ''),
      url: typeof r.html_url === 'string' ? r.html_url : null,
    };
  }

  /** GitHub issue states are `open` and `closed`; `content.state` is used as is. */
  async createIssue(content: IssueContent) {
    return this.issue(await this.call('POST', 'issues', { title: content.title, body: content.description }));
  }
  async updateIssue(id: string, content: IssueContent) {
    if (!/^\d+$/.test(id)) throw new InvalidArgumentError('id', 'an issue number');
    return this.issue(await this.call('PATCH', `issues/${id}`, { title: content.title, body: content.description, state: content.state }));
  }
  async getIssue(id: string) {
    if (!/^\d+$/.test(id)) throw new InvalidArgumentError('id', 'an issue number');
    return this.issue(await this.call('GET', `issues/${id}`));
  }

  async createPullRequest(input: { title: string; head: string; base: string; body: string }) {
    const r = await this.call<{ number?: unknown; html_url?: unknown }>('POST', 'pulls', input);
    if (typeof r?.number !== 'number' || typeof r.html_url !== 'string')
      throw new WorkflowError('upstream_failed', 'the code host answered with something that is not a pull request');
    return { number: r.number, url: r.html_url };
  }

  async ciStatus(ref: string, options: { signal?: AbortSignal } = {}): Promise<CiStatus> {
    if (!/^[A-Za-z0-9_./-]{1,250}$/.test(ref) || ref.startsWith('-') || ref.includes('..'))
      throw new InvalidArgumentError('ref', 'not a commit or branch');
    const r = await this.call<{ state?: unknown; statuses?: { context?: unknown; state?: unknown; target_url?: unknown }[] }>(
      'GET',
      `commits/${ref}/status`,
      undefined,
      options.signal,
    );
    const statuses = Array.isArray(r?.statuses) ? r.statuses : [];
    const state = statuses.length === 0 ? 'none' : (String(r.state) as CiStatus['state']);
    const url = statuses.find((s) => typeof s.target_url === 'string')?.target_url;
    return {
      state: ['success', 'failure', 'pending', 'error', 'none'].includes(state) ? state : 'error',
      url: typeof url === 'string' ? url : null,
      checks: statuses.map((s) => ({ context: String(s.context ?? ''), state: String(s.state ?? '') })),
    };
  }
}
