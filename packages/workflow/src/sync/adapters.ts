/**
 * @module adapters
 * The sync ports, `TrackerAdapter` for the project-management tool and
 * `CodeHostAdapter` for GitHub-style issues, pull requests and CI, and the
 * "custom REST" tracker adapter: a documented generic shape (`POST /issues`,
 * OAuth 2.0 client credentials, a configurable state mapping) for an
 * in-house tracker. Linear, Plane and GitHub have their own modules.
 */

import type { CiStatusSource } from '../agents/reviewers.js';
import type { FeatureState } from '../domain/model.js';
import { WorkflowError } from '../errors.js';
import type { Clock } from '../util/clock.js';
import { jsonRequest, type OAuthClientCredentials, OAuthTokenSource } from './http.js';
import { checkedBaseUrl, guardedDispatcher, type OutboundPolicy } from './outbound.js';
import { StateMapping } from './stateMapping.js';

export { DEFAULT_STATE_MAPPING } from './stateMapping.js';

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
  /**
   * Posts a comment on an issue (how a refused state change is explained to the tracker's users).
   * Optional: an adapter without it has refusals reported only in the webhook's answer.
   */
  commentOnIssue?(id: string, body: string): Promise<{ id: string; url: string | null }>;
}

/** Port for a GitHub-style code host. */
export interface CodeHostAdapter extends CiStatusSource {
  createIssue(content: IssueContent): Promise<RemoteIssue>;
  updateIssue(id: string, content: IssueContent): Promise<RemoteIssue>;
  getIssue(id: string): Promise<RemoteIssue>;
  createPullRequest(input: { title: string; head: string; base: string; body: string }): Promise<{ number: number; url: string }>;
  /** Comments on an issue or pull request (optional: added with the Octokit adapter). */
  commentOnIssue?(id: string, body: string): Promise<{ id: string; url: string | null }>;
  /** A pull request's state and head commit (optional: added with the Octokit adapter). */
  getPullRequest?(number: number): Promise<{ number: number; url: string; state: string; merged: boolean; head_sha: string }>;
  /** Merges a pull request, pinned to the checked head `sha` when given (optional: added with the Octokit adapter). */
  mergePullRequest?(
    number: number,
    options?: { method?: 'merge' | 'squash' | 'rebase'; sha?: string },
  ): Promise<{ merged: boolean; sha: string }>;
}

/** Options of {@link RestTrackerAdapter}. */
export interface RestTrackerOptions extends OutboundPolicy {
  /** API base, e.g. `https://tracker.example/api/v1` (operator configuration). */
  baseUrl: string;
  oauth: OAuthClientCredentials;
  /** Feature state → tracker state; missing entries use `DEFAULT_STATE_MAPPING` (`@switchyard/workflow/sync`). */
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
  private readonly mapping: StateMapping;
  private readonly dispatcher;
  private readonly baseUrl: string;

  constructor(options: RestTrackerOptions) {
    this.baseUrl = checkedBaseUrl('baseUrl', options.baseUrl, options);
    checkedBaseUrl('oauth.tokenUrl', options.oauth.tokenUrl, options);
    this.dispatcher = guardedDispatcher(options);
    this.tokens = new OAuthTokenSource(options.oauth, options.clock, this.dispatcher);
    this.mapping = new StateMapping(options.stateMapping);
  }

  mapState(state: FeatureState): string {
    return this.mapping.map(state);
  }

  unmapState(remote: string): FeatureState | undefined {
    return this.mapping.unmap(remote);
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const attempt = async (refresh: boolean) =>
      jsonRequest<T>(method, joinUrl(this.baseUrl, path), {
        headers: { authorization: `Bearer ${await this.tokens.token(refresh)}` },
        body,
        dispatcher: this.dispatcher,
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
  /** `POST /issues/{id}/comments` with `{body}`. */
  async commentOnIssue(id: string, body: string) {
    const r = await this.call<{ id?: unknown; url?: unknown }>('POST', `issues/${encodeURIComponent(id)}/comments`, { body });
    return { id: String(r?.id ?? ''), url: typeof r?.url === 'string' ? r.url : null };
  }
}
