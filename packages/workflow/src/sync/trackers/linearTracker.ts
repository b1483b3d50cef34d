/**
 * @module linearTracker
 * The Linear tracker adapter: issues in one team over Linear's GraphQL API
 * through `@linear/sdk`, states by name through the team's workflow
 * states, comments for refused state changes. The SDK is loaded on first
 * use, so importing the workflow does not load it; its requests go through
 * the SSRF-guarded dispatcher.
 */
import type { LinearClient } from '@linear/sdk';
import { InvalidArgumentError, WorkflowError } from '../../errors.js';
import type { IssueContent, RemoteIssue, TrackerAdapter } from '../adapters.js';
import { blockedAsWorkflowError, checkedBaseUrl } from '../outbound.js';
import { TrackerConnection, type TrackerConnectionOptions } from './trackerAuth.js';

/** Options of {@link LinearTrackerAdapter}. */
export interface LinearTrackerOptions extends TrackerConnectionOptions {
  /** The GraphQL endpoint (default `https://api.linear.app/graphql`). */
  apiUrl?: string;
  /** The team whose issues the features become (its UUID). */
  teamId: string;
}

/**
 * @example
 * ```ts
 * const linear = new LinearTrackerAdapter({
 *   teamId: '9cfb482a-81e3-4154-b5b9-2c805e70a02d',
 *   auth: { type: 'oauth_client_credentials', tokenUrl: 'https://api.linear.app/oauth/token', clientId, clientSecret, scope: 'read,write' },
 * });
 * ```
 */
export class LinearTrackerAdapter extends TrackerConnection implements TrackerAdapter {
  private readonly apiUrl: string;
  private states: Promise<Map<string, { id: string; name: string }>> | undefined;

  constructor(private readonly options: LinearTrackerOptions) {
    super(options);
    if (!/^[A-Za-z0-9-]{1,64}$/.test(options.teamId)) throw new InvalidArgumentError('teamId', 'a Linear team id');
    this.apiUrl = checkedBaseUrl('apiUrl', options.apiUrl ?? 'https://api.linear.app/graphql', options);
  }

  private async client(refresh: boolean): Promise<LinearClient> {
    const { LinearClient } = await import('@linear/sdk');
    const credential = await this.tokens.credential(refresh);
    // The SDK spreads unknown options into fetch's init: `dispatcher` routes its calls through the guard.
    return new LinearClient({
      apiUrl: this.apiUrl,
      ...(credential.kind === 'api_key' ? { apiKey: credential.value } : { accessToken: credential.value }),
      dispatcher: this.dispatcher,
    } as unknown as ConstructorParameters<typeof LinearClient>[0]);
  }

  /** Runs `work` with a client; an authentication failure fetches a fresh OAuth token once. */
  private async call<T>(what: string, work: (client: LinearClient) => Promise<T>): Promise<T> {
    const attempt = async (refresh: boolean) => work(await this.client(refresh));
    try {
      try {
        return await attempt(false);
      } catch (error) {
        if (this.tokens.refreshable && isAuthenticationError(error)) return await attempt(true);
        throw error;
      }
    } catch (error) {
      if (error instanceof WorkflowError) throw error;
      const blocked = blockedAsWorkflowError(error);
      if (blocked) throw blocked;
      throw new WorkflowError('upstream_failed', `Linear ${what} failed: ${(error as Error).message}`, { cause: error });
    }
  }

  /** The team's workflow states by lower-case name (read once). */
  private teamStates(client: LinearClient): Promise<Map<string, { id: string; name: string }>> {
    this.states ??= client
      .workflowStates({ first: 250, filter: { team: { id: { eq: this.options.teamId } } } })
      .then((connection) => new Map(connection.nodes.map((s) => [s.name.toLowerCase(), { id: s.id, name: s.name }])))
      .catch((error: unknown) => {
        this.states = undefined;
        throw error;
      });
    return this.states;
  }

  private async stateId(client: LinearClient, name: string): Promise<string> {
    const state = (await this.teamStates(client)).get(name.toLowerCase());
    if (!state)
      throw new WorkflowError('invalid_argument', `Linear team ${this.options.teamId} has no workflow state named "${name}"`, {
        details: { field: 'stateMapping' },
      });
    return state.id;
  }

  private async read(client: LinearClient, id: string): Promise<RemoteIssue> {
    const issue = await client.issue(id);
    const state = await issue.state;
    return { id: issue.id, title: issue.title, description: issue.description ?? '', state: state?.name ?? '', url: issue.url };
  }

  async createIssue(content: IssueContent): Promise<RemoteIssue> {
    return this.call('issueCreate', async (client) => {
      const stateId = await this.stateId(client, content.state);
      const payload = await client.createIssue({
        teamId: this.options.teamId,
        title: content.title,
        description: content.description,
        stateId,
      });
      const id = payload.issueId;
      if (!payload.success || !id) throw new WorkflowError('upstream_failed', 'Linear did not create the issue');
      return this.read(client, id);
    });
  }

  async updateIssue(id: string, content: IssueContent): Promise<RemoteIssue> {
    return this.call('issueUpdate', async (client) => {
      const stateId = await this.stateId(client, content.state);
      const payload = await client.updateIssue(id, { title: content.title, description: content.description, stateId });
      if (!payload.success) throw new WorkflowError('upstream_failed', `Linear did not update issue ${id}`);
      return this.read(client, id);
    });
  }

  async getIssue(id: string): Promise<RemoteIssue> {
    return this.call('issue', (client) => this.read(client, id));
  }

  async commentOnIssue(id: string, body: string): Promise<{ id: string; url: string | null }> {
    return this.call('commentCreate', async (client) => {
      const payload = await client.createComment({ issueId: id, body });
      const commentId = payload.commentId;
      if (!payload.success || !commentId) throw new WorkflowError('upstream_failed', `Linear did not comment on issue ${id}`);
      return { id: commentId, url: null };
    });
  }
}

function isAuthenticationError(error: unknown): boolean {
  const e = error as { type?: unknown; status?: unknown } | null;
  return e?.type === 'AuthenticationError' || e?.status === 401;
}
