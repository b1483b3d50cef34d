/**
 * @module planeTracker
 * The Plane tracker adapter: work items of one project over Plane's REST
 * API v1 (`/api/v1/workspaces/{slug}/projects/{id}/work-items/`), states
 * by name through the project's states, comments for refused state
 * changes. Request and answer shapes are the types of Plane's own SDK
 * (`@makeplane/plane-node-sdk`, a type-only import). Plane stores
 * descriptions as HTML; a feature's plain-text description is sent as one
 * escaped paragraph and read back through the same mapping.
 */
import type {
  CreateWorkItem,
  PaginatedResponse,
  State,
  UpdateWorkItem,
  WorkItemBase,
  WorkItemComment,
  WorkItemCommentCreateRequest,
} from '@makeplane/plane-node-sdk';
import { InvalidArgumentError, WorkflowError } from '../../errors.js';
import type { IssueContent, RemoteIssue, TrackerAdapter } from '../adapters.js';
import { jsonRequest } from '../http.js';
import { checkedBaseUrl } from '../outbound.js';
import { TrackerConnection, type TrackerConnectionOptions } from './trackerAuth.js';

/** Options of {@link PlaneTrackerAdapter}. */
export interface PlaneTrackerOptions extends TrackerConnectionOptions {
  /** Plane's origin (default `https://api.plane.so`; a self-hosted Plane's URL). */
  baseUrl?: string;
  workspaceSlug: string;
  /** The project whose work items the features become (its UUID). */
  projectId: string;
}

const SEGMENT = /^[A-Za-z0-9_-]{1,100}$/;

/** Plain text to the one-paragraph HTML Plane stores. */
export function textToPlaneHtml(text: string): string {
  const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  return `<p>${escaped}</p>`;
}

/** Plane's HTML back to plain text: the inverse of {@link textToPlaneHtml}, or the tags stripped for HTML edited in Plane. */
export function planeHtmlToText(html: string | undefined): string {
  if (!html) return '';
  const single = /^<p>([^<]*)<\/p>$/.exec(html);
  const body = single
    ? single[1]!
    : html
        .replace(/<br\s*\/?>/gi, '\n')
        .replace(/<\/p>\s*<p>/gi, '\n\n')
        .replace(/<[^>]*>/g, '');
  return body
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

/**
 * @example
 * ```ts
 * const plane = new PlaneTrackerAdapter({ workspaceSlug: 'acme', projectId, auth: { type: 'api_key', apiKey } });
 * ```
 */
export class PlaneTrackerAdapter extends TrackerConnection implements TrackerAdapter {
  private readonly base: string;
  private states: Promise<State[]> | undefined;

  constructor(private readonly options: PlaneTrackerOptions) {
    super(options);
    if (!SEGMENT.test(options.workspaceSlug)) throw new InvalidArgumentError('workspaceSlug', 'a Plane workspace slug');
    if (!SEGMENT.test(options.projectId)) throw new InvalidArgumentError('projectId', 'a Plane project id');
    const origin = checkedBaseUrl('baseUrl', options.baseUrl ?? 'https://api.plane.so', options);
    this.base = `${origin}/api/v1/workspaces/${options.workspaceSlug}/projects/${options.projectId}/`;
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const attempt = async (refresh: boolean) => {
      const credential = await this.tokens.credential(refresh);
      const headers: Record<string, string> =
        credential.kind === 'api_key' ? { 'x-api-key': credential.value } : { authorization: `Bearer ${credential.value}` };
      return (await jsonRequest<T>(method, new URL(path, this.base), { headers, body, dispatcher: this.dispatcher })).body;
    };
    try {
      return await attempt(false);
    } catch (error) {
      if (this.tokens.refreshable && error instanceof WorkflowError && error.details?.status === 401) return attempt(true);
      throw error;
    }
  }

  private projectStates(): Promise<State[]> {
    this.states ??= this.call<PaginatedResponse<State>>('GET', 'states/')
      .then((page) => page.results)
      .catch((error: unknown) => {
        this.states = undefined;
        throw error;
      });
    return this.states;
  }

  private async stateId(name: string): Promise<string> {
    const state = (await this.projectStates()).find((s) => s.name.toLowerCase() === name.toLowerCase());
    if (!state)
      throw new WorkflowError('invalid_argument', `Plane project ${this.options.projectId} has no state named "${name}"`, {
        details: { field: 'stateMapping' },
      });
    return state.id;
  }

  private async remote(item: WorkItemBase): Promise<RemoteIssue> {
    if (typeof item?.id !== 'string' || typeof item.name !== 'string')
      throw new WorkflowError('upstream_failed', 'Plane answered with something that is not a work item');
    const state = item.state ? (await this.projectStates()).find((s) => s.id === item.state) : undefined;
    return {
      id: item.id,
      title: item.name,
      description: planeHtmlToText(item.description_html),
      state: state?.name ?? '',
      url: null,
    };
  }

  async createIssue(content: IssueContent): Promise<RemoteIssue> {
    const body: CreateWorkItem = {
      name: content.title,
      description_html: textToPlaneHtml(content.description),
      state: await this.stateId(content.state),
    };
    return this.remote(await this.call<WorkItemBase>('POST', 'work-items/', body));
  }

  async updateIssue(id: string, content: IssueContent): Promise<RemoteIssue> {
    const body: UpdateWorkItem = {
      name: content.title,
      description_html: textToPlaneHtml(content.description),
      state: await this.stateId(content.state),
    };
    return this.remote(await this.call<WorkItemBase>('PATCH', `work-items/${itemId(id)}/`, body));
  }

  async getIssue(id: string): Promise<RemoteIssue> {
    return this.remote(await this.call<WorkItemBase>('GET', `work-items/${itemId(id)}/`));
  }

  async commentOnIssue(id: string, body: string): Promise<{ id: string; url: string | null }> {
    const request: WorkItemCommentCreateRequest = { comment_html: textToPlaneHtml(body) };
    const comment = await this.call<WorkItemComment>('POST', `work-items/${itemId(id)}/comments/`, request);
    return { id: comment.id, url: null };
  }
}

function itemId(id: string): string {
  if (!SEGMENT.test(id)) throw new InvalidArgumentError('id', 'a Plane work item id');
  return id;
}
