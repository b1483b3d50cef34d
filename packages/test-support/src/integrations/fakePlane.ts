/**
 * A fake of Plane's REST API v1 on 127.0.0.1: the project's states, work
 * items and their comments under
 * `/api/v1/workspaces/{slug}/projects/{project_id}/`, and the OAuth token
 * endpoint `/auth/o/token/` (client credentials for an app installation,
 * as Plane's bot tokens are issued). Records and answers are typed with
 * Plane's own SDK (`@makeplane/plane-node-sdk`), and the SDK's client is
 * run against this fake in the tests, so the paths, headers and bodies the
 * adapter uses are the ones Plane's SDK uses. Authentication: `X-API-Key`
 * or `Authorization: Bearer` with an issued token.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type {
  CreateWorkItem,
  PaginatedResponse,
  State,
  UpdateWorkItem,
  WorkItem,
  WorkItemComment,
  WorkItemCommentCreateRequest,
} from '@makeplane/plane-node-sdk';
import { listenOnLoopback } from './listen.js';

export interface FakePlane {
  url: string;
  workspaceSlug: string;
  projectId: string;
  items: Map<string, WorkItem>;
  states: State[];
  comments: WorkItemComment[];
  apiKeys: Set<string>;
  /** Bearer tokens issued by `/auth/o/token/`. */
  tokens: Set<string>;
  tokensIssued: number;
  violations: string[];
  /** Moves a work item to a state as a person in Plane would. */
  setState(itemId: string, name: string): void;
  close(): Promise<void>;
}

const NOW = '2026-03-01T09:00:00.000Z';

export async function fakePlane(options: {
  apiKeys?: string[];
  oauth?: { clientId: string; clientSecret: string; installationId: string };
}): Promise<FakePlane> {
  const workspaceSlug = 'acme';
  const projectId = randomUUID();
  const mkState = (name: string, group: NonNullable<State['group']>, sequence: number): State => ({
    id: randomUUID(),
    name,
    color: '#60646C',
    group,
    sequence,
    project: projectId,
    workspace: workspaceSlug,
    created_at: NOW,
    updated_at: NOW,
    deleted_at: '',
    created_by: 'owner',
    updated_by: 'owner',
  });
  const fake: FakePlane = {
    url: '',
    workspaceSlug,
    projectId,
    items: new Map(),
    states: [
      mkState('Backlog', 'backlog', 15000),
      mkState('Todo', 'unstarted', 25000),
      mkState('In Progress', 'started', 35000),
      mkState('In Review', 'started', 45000),
      mkState('Done', 'completed', 55000),
    ],
    comments: [],
    apiKeys: new Set(options.apiKeys ?? []),
    tokens: new Set(),
    tokensIssued: 0,
    violations: [],
    setState(itemId, name) {
      const item = fake.items.get(itemId);
      const target = fake.states.find((s) => s.name === name);
      if (!item || !target) throw new Error(`no item ${itemId} or state ${name}`);
      item.state = target.id;
    },
    close: async () => undefined,
  };
  const base = `/api/v1/workspaces/${workspaceSlug}/projects/${projectId}/`;
  const page = <T>(results: T[]): PaginatedResponse<T> => ({
    results,
    count: results.length,
    total_count: results.length,
    total_pages: 1,
    total_results: results.length,
    next_page_results: false,
    prev_page_results: false,
  });

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const answer = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/auth/o/token/' && req.method === 'POST') {
      const basic = Buffer.from(String(req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
      const form = new URLSearchParams(raw);
      const o = options.oauth;
      if (!o || basic !== `${o.clientId}:${o.clientSecret}`) return answer(401, { error: 'invalid_client' });
      if (form.get('grant_type') !== 'client_credentials' || form.get('app_installation_id') !== o.installationId)
        return answer(400, { error: 'invalid_grant' });
      const token = `plane-bot-${++fake.tokensIssued}`;
      fake.tokens.add(token);
      return answer(200, { access_token: token, token_type: 'Bearer', expires_in: 86400, scope: 'read write' });
    }
    const key = req.headers['x-api-key'];
    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    if (!(typeof key === 'string' && fake.apiKeys.has(key)) && !(bearer && fake.tokens.has(bearer)))
      return answer(401, { detail: 'Authentication credentials were not provided.' });
    if (!url.pathname.startsWith(base)) return answer(404, { error: 'Project not found' });
    if (raw && !String(req.headers['content-type'] ?? '').includes('application/json'))
      fake.violations.push(`${url.pathname}: body is not JSON`);
    const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    const rest = url.pathname.slice(base.length);
    const stateOf = (id: unknown) => fake.states.find((s) => s.id === id);
    if (rest === 'states/' && req.method === 'GET') return answer(200, page(fake.states));
    if (rest === 'work-items/' && req.method === 'POST') {
      const input = body as unknown as CreateWorkItem;
      if (typeof input.name !== 'string' || input.name === '') return answer(400, { name: ['This field is required.'] });
      if (input.state !== undefined && !stateOf(input.state)) return answer(400, { state: ['Invalid pk - object does not exist.'] });
      const item: WorkItem = {
        id: randomUUID(),
        name: input.name,
        sequence_id: fake.items.size + 1,
        project: projectId,
        ...(input.description_html !== undefined ? { description_html: input.description_html } : {}),
        state: input.state ?? fake.states[0]!.id,
        created_at: new Date(NOW),
        updated_at: new Date(NOW),
        created_by: 'bot',
      };
      fake.items.set(item.id, item);
      return answer(201, item);
    }
    const itemPath = /^work-items\/([0-9a-f-]{36})\/(comments\/)?$/.exec(rest);
    const item = itemPath ? fake.items.get(itemPath[1]!) : undefined;
    if (!item) return answer(404, { error: 'Work item not found' });
    if (itemPath![2]) {
      if (req.method === 'GET') return answer(200, page(fake.comments.filter((c) => c.issue === item.id)));
      if (req.method !== 'POST') return answer(405, { detail: 'Method not allowed' });
      const input = body as WorkItemCommentCreateRequest;
      if (typeof input.comment_html !== 'string') return answer(400, { comment_html: ['This field is required.'] });
      const comment: WorkItemComment = {
        id: randomUUID(),
        comment_html: input.comment_html,
        issue: item.id,
        project: projectId,
        created_at: NOW,
      };
      fake.comments.push(comment);
      return answer(201, comment);
    }
    if (req.method === 'GET') return answer(200, item);
    if (req.method === 'PATCH') {
      const input = body as UpdateWorkItem;
      if (input.state !== undefined && !stateOf(input.state)) return answer(400, { state: ['Invalid pk - object does not exist.'] });
      if (input.name !== undefined) item.name = input.name;
      if (input.description_html !== undefined) item.description_html = input.description_html;
      if (input.state !== undefined) item.state = input.state;
      return answer(200, item);
    }
    answer(405, { detail: 'Method not allowed' });
  });
  const listening = await listenOnLoopback(server);
  fake.url = `${listening.origin}`;
  fake.close = listening.close;
  return fake;
}
