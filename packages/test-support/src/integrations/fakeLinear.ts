/**
 * A fake of Linear's GraphQL API on 127.0.0.1, for `@linear/sdk` pointed
 * at it with `apiUrl`. It parses each query the SDK sends (graphql-js) and
 * answers the root fields the tracker adapter uses (`issue`,
 * `workflowState`, `workflowStates`, `issueCreate`, `issueUpdate`,
 * `commentCreate`) from records typed with the SDK's own fragment types
 * (`LinearDocument.IssueFragment`, ...), so a field the SDK starts to
 * require fails the type check here. Selections are projected from those
 * records: a selected field the record lacks is an optional field and
 * answers null, and a root field the fake does not model is a GraphQL
 * error, which the test sees. Requests without the expected bearer token
 * or API key answer Linear's authentication error.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { LinearDocument as L } from '@linear/sdk';
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  Kind,
  type OperationDefinitionNode,
  parse,
  type SelectionSetNode,
  valueFromASTUntyped,
} from 'graphql';
import { listenOnLoopback } from './listen.js';

type Issue = L.IssueFragment;
type State = L.WorkflowStateFragment;

export interface FakeLinear {
  url: string;
  teamId: string;
  issues: Map<string, Issue>;
  states: State[];
  comments: { issueId: string; body: string }[];
  /** Root fields asked for, in order. */
  calls: string[];
  /** Problems with requests (unmodelled fields, bad input); should stay empty. */
  violations: string[];
  /** Credentials accepted: `Bearer <token>` for OAuth, the bare key for API keys. */
  authorizations: Set<string>;
  /** Changes an issue's state as a person in Linear would (returns the new state's name). */
  setState(issueId: string, name: string): void;
  close(): Promise<void>;
}

const NOW = new Date('2026-03-01T09:00:00.000Z');

function state(teamId: string, name: string, type: string, position: number): State {
  return {
    __typename: 'WorkflowState',
    id: randomUUID(),
    name,
    type,
    position,
    color: '#bec2c8',
    description: null,
    createdAt: NOW,
    updatedAt: NOW,
    archivedAt: null,
    team: { id: teamId },
  };
}

function issueRecord(teamId: string, number: number, input: { title: string; description?: string | null; stateId: string }): Issue {
  const id = randomUUID();
  return {
    __typename: 'Issue',
    id,
    number,
    identifier: `ENG-${number}`,
    title: input.title,
    description: input.description ?? null,
    url: `https://linear.app/acme/issue/ENG-${number}`,
    branchName: `eng-${number}`,
    priority: 0,
    priorityLabel: 'No priority',
    estimate: null,
    boardOrder: 0,
    sortOrder: number,
    prioritySortOrder: 0,
    customerTicketCount: 0,
    labelIds: [],
    previousIdentifiers: [],
    reactionData: {},
    reactions: [],
    inheritsSharedAccess: false,
    sharedAccess: {
      __typename: 'IssueSharedAccess',
      isShared: false,
      sharedWithCount: 0,
      viewerHasOnlySharedAccess: false,
      disallowedIssueFields: [],
      sharedWithUsers: [],
    },
    createdAt: NOW,
    updatedAt: NOW,
    team: { id: teamId },
    state: { id: input.stateId },
  };
}

export async function fakeLinear(options: {
  authorizations: string[];
  /** An OAuth app for the client-credentials grant at `/oauth/token` (Linear's app-actor tokens). */
  oauth?: { clientId: string; clientSecret: string };
}): Promise<FakeLinear> {
  const teamId = randomUUID();
  const fake: FakeLinear = {
    url: '',
    teamId,
    issues: new Map(),
    states: [
      state(teamId, 'Backlog', 'backlog', 0),
      state(teamId, 'Todo', 'unstarted', 1),
      state(teamId, 'In Progress', 'started', 2),
      state(teamId, 'In Review', 'started', 3),
      state(teamId, 'Done', 'completed', 4),
    ],
    comments: [],
    calls: [],
    violations: [],
    authorizations: new Set(options.authorizations),
    setState(issueId, name) {
      const issue = fake.issues.get(issueId);
      const target = fake.states.find((s) => s.name === name);
      if (!issue || !target) throw new Error(`no issue ${issueId} or state ${name}`);
      issue.state = { id: target.id };
      issue.updatedAt = new Date(issue.updatedAt.getTime() + 1000);
    },
    close: async () => undefined,
  };
  const knownState = (id: unknown) => fake.states.find((s) => s.id === id);

  type Args = Record<string, unknown>;
  const roots: Record<string, (args: Args) => unknown> = {
    issue: (args) => fake.issues.get(String(args.id)) ?? notFound('Issue'),
    workflowState: (args) => knownState(args.id) ?? notFound('WorkflowState'),
    workflowStates: (args) => {
      const teamFilter = (args.filter as { team?: { id?: { eq?: unknown } } } | undefined)?.team?.id?.eq;
      const nodes = fake.states.filter((s) => teamFilter === undefined || s.team.id === teamFilter);
      const connection: L.WorkflowStateConnectionFragment = {
        __typename: 'WorkflowStateConnection',
        nodes,
        pageInfo: { __typename: 'PageInfo', hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
      };
      return connection;
    },
    issueCreate: (args) => {
      const input = args.input as { teamId?: unknown; title?: unknown; description?: unknown; stateId?: unknown };
      if (input.teamId !== teamId) return invalid('teamId: team not found');
      if (typeof input.title !== 'string' || input.title === '') return invalid('title: must not be empty');
      const target = knownState(input.stateId) ?? fake.states[0]!;
      const issue = issueRecord(teamId, fake.issues.size + 1, {
        title: input.title,
        description: typeof input.description === 'string' ? input.description : null,
        stateId: target.id,
      });
      fake.issues.set(issue.id, issue);
      const payload: L.IssuePayloadFragment = {
        __typename: 'IssuePayload',
        success: true,
        lastSyncId: fake.issues.size,
        issue: { id: issue.id },
      };
      return payload;
    },
    issueUpdate: (args) => {
      const issue = fake.issues.get(String(args.id));
      if (!issue) return notFound('Issue');
      const input = args.input as { title?: unknown; description?: unknown; stateId?: unknown };
      if (typeof input.title === 'string') issue.title = input.title;
      if (typeof input.description === 'string') issue.description = input.description;
      if (input.stateId !== undefined) {
        const target = knownState(input.stateId);
        if (!target) return invalid('stateId: workflow state not found');
        issue.state = { id: target.id };
      }
      const payload: L.IssuePayloadFragment = { __typename: 'IssuePayload', success: true, lastSyncId: 1, issue: { id: issue.id } };
      return payload;
    },
    commentCreate: (args) => {
      const input = args.input as { issueId?: unknown; body?: unknown };
      if (!fake.issues.has(String(input.issueId))) return notFound('Issue');
      fake.comments.push({ issueId: String(input.issueId), body: String(input.body) });
      const payload: L.CommentPayloadFragment = {
        __typename: 'CommentPayload',
        success: true,
        lastSyncId: 1,
        comment: { id: randomUUID() },
      };
      return payload;
    },
  };

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    if (req.method === 'POST' && req.url === '/oauth/token') {
      const basic = Buffer.from(String(req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      if (!options.oauth || basic !== `${options.oauth.clientId}:${options.oauth.clientSecret}`)
        return answer(401, { error: 'invalid_client' });
      if (form.get('grant_type') !== 'client_credentials') return answer(400, { error: 'unsupported_grant_type' });
      const token = `lin_oauth_${randomUUID()}`;
      fake.authorizations.add(`Bearer ${token}`);
      return answer(200, { access_token: token, token_type: 'Bearer', expires_in: 86399, scope: form.get('scope') ?? 'read' });
    }
    if (req.method !== 'POST' || req.url !== '/graphql') return answer(404, { errors: [{ message: 'not found' }] });
    if (!fake.authorizations.has(String(req.headers.authorization ?? ''))) {
      return answer(400, {
        errors: [
          {
            message: 'Authentication required, not authenticated',
            extensions: {
              type: 'authentication error',
              code: 'AUTHENTICATION_ERROR',
              statusCode: 401,
              userPresentableMessage: 'You need to authenticate.',
            },
          },
        ],
      });
    }
    const { query, variables } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      query: string;
      variables?: Record<string, unknown>;
    };
    let document: DocumentNode;
    try {
      document = parse(query);
    } catch (error) {
      fake.violations.push(`unparsable query: ${(error as Error).message}`);
      return answer(400, { errors: [{ message: (error as Error).message }] });
    }
    const fragments = new Map(
      document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
    );
    const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
    const data: Record<string, unknown> = {};
    const errors: unknown[] = [];
    for (const selection of operation.selectionSet.selections) {
      if (selection.kind !== Kind.FIELD) continue;
      const root = selection.name.value;
      fake.calls.push(root);
      const resolve = roots[root];
      if (!resolve) {
        fake.violations.push(`root field ${root} is not modelled`);
        errors.push({ message: `Cannot query field "${root}"` });
        continue;
      }
      const args = Object.fromEntries(
        (selection.arguments ?? []).map((a) => [a.name.value, valueFromASTUntyped(a.value, variables ?? {})]),
      );
      const value = resolve(args);
      if (value instanceof GraphQLFailure) {
        errors.push({ message: value.message, path: [root], extensions: { type: value.type, userPresentableMessage: value.message } });
        data[root] = null;
        continue;
      }
      data[root] = project(value, selection, fragments);
    }
    answer(200, errors.length ? { data: null, errors } : { data });
  });
  const listening = await listenOnLoopback(server);
  fake.url = `${listening.origin}/graphql`;
  fake.close = listening.close;
  return fake;
}

class GraphQLFailure {
  constructor(
    readonly type: string,
    readonly message: string,
  ) {}
}
const notFound = (what: string) => new GraphQLFailure('invalid input', `${what} not found`);
const invalid = (message: string) => new GraphQLFailure('invalid input', message);

/** The selected fields of `value`: fragments and inline fragments apply when their type is the record's `__typename`. */
function project(value: unknown, field: FieldNode, fragments: Map<string, FragmentDefinitionNode>): unknown {
  if (value === undefined || value === null) return null;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item) => project(item, field, fragments));
  if (!field.selectionSet || typeof value !== 'object') return value;
  return select(value as Record<string, unknown>, field.selectionSet, fragments);
}

function select(
  record: Record<string, unknown>,
  set: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const applies = (type: string | undefined) => type === undefined || type === record.__typename || record.__typename === undefined;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      const name = selection.name.value;
      out[selection.alias?.value ?? name] = project(record[name], selection, fragments);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      if (applies(selection.typeCondition?.name.value)) Object.assign(out, select(record, selection.selectionSet, fragments));
    } else {
      const fragment = fragments.get(selection.name.value);
      if (fragment && applies(fragment.typeCondition.name.value)) Object.assign(out, select(record, fragment.selectionSet, fragments));
    }
  }
  return out;
}
