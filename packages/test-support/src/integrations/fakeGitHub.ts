/**
 * A fake GitHub REST API on 127.0.0.1 for the code-host adapter's tests.
 * Every request is matched to an operation of GitHub's published OpenAPI
 * description and checked against it, and every answer is checked before
 * it is sent; anything that does not conform lands in `violations`, which
 * each test asserts empty. Answers start from the schema's minimal valid
 * object (githubOpenApi's exampleResponse) and set the fields the fake
 * models, typed with Octokit's own response types.
 *
 * Given a `repository` (a bare git repository standing for the host's
 * storage), CI is reported only for commits pushed to it, as on GitHub,
 * where a commit the host never received has no check runs and no status.
 *
 * GitHub App authentication is modelled too: the JWT an app signs is
 * verified with the app's public key and exchanged for an installation
 * token (`POST /app/installations/{id}/access_tokens`).
 */
import { execFileSync } from 'node:child_process';
import { createPublicKey, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { RestEndpointMethodTypes } from '@octokit/rest';
import { checkRequest, checkResponse, exampleOfComponent, exampleResponse, type Operation, operation } from './githubOpenApi.js';
import { listenOnLoopback } from './listen.js';

type Issue = RestEndpointMethodTypes['issues']['get']['response']['data'];
type Pull = RestEndpointMethodTypes['pulls']['get']['response']['data'];
type CheckRun = RestEndpointMethodTypes['checks']['listForRef']['response']['data']['check_runs'][number];
type Status = RestEndpointMethodTypes['repos']['getCombinedStatusForRef']['response']['data']['statuses'][number];
type InstallationToken = RestEndpointMethodTypes['apps']['createInstallationAccessToken']['response']['data'];

/** The operations the fake answers. */
const OPERATIONS = [
  'issues/create',
  'issues/get',
  'issues/update',
  'issues/create-comment',
  'pulls/create',
  'pulls/get',
  'pulls/merge',
  'checks/list-for-ref',
  'repos/get-combined-status-for-ref',
  'apps/create-installation-access-token',
] as const;

interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A GitHub App the fake knows: its id, public key and installation. */
export interface FakeApp {
  appId: number;
  publicKeyPem: string;
  installationId: number;
}

export interface FakeGitHub {
  url: string;
  /** Requests or answers that do not conform to GitHub's description (should stay empty). */
  violations: string[];
  /** Operation ids in the order they were called. */
  calls: string[];
  issues: Map<number, Issue>;
  pulls: Map<number, Pull>;
  comments: { issue: number; body: string }[];
  /** Check runs and statuses by commit SHA or branch name (`*`: any ref not listed). */
  checkRuns: Map<string, Partial<CheckRun>[]>;
  statuses: Map<string, Partial<Status>[]>;
  /** Tokens the fake accepts (personal tokens, device-flow user tokens, issued installation tokens). */
  tokens: Set<string>;
  installationTokensIssued: number;
  /** Answers the next calls of an operation with these (rate limits, outages), before the modelled answer. */
  failNext: Map<string, Answer[]>;
  /**
   * Each CI read (check runs or combined status): the ref asked for and, with a `repository`, the
   * commit it names there (null: one the host does not have). Without a repository, `commit` is the ref.
   */
  ciReads: { operation: string; ref: string; commit: string | null }[];
  close(): Promise<void>;
}

/** Options of {@link fakeGitHub}. */
export interface FakeGitHubOptions {
  owner: string;
  repo: string;
  tokens?: string[];
  app?: FakeApp;
  /** A bare git repository holding what was pushed to the host: CI is reported only for its commits. */
  repository?: string;
}

/** The commit `ref` names in the bare `repository` (null when it has none). */
function commitIn(repository: string, ref: string): string | null {
  try {
    return execFileSync('git', ['--git-dir', repository, 'rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
}

/** Starts the fake; `owner/repo` is the one repository it holds. */
export async function fakeGitHub(options: FakeGitHubOptions): Promise<FakeGitHub> {
  const ops = OPERATIONS.map((id) => operation(id));
  const state: FakeGitHub = {
    url: '',
    violations: [],
    calls: [],
    issues: new Map(),
    pulls: new Map(),
    comments: [],
    checkRuns: new Map(),
    statuses: new Map(),
    tokens: new Set(options.tokens ?? []),
    installationTokensIssued: 0,
    failNext: new Map(),
    ciReads: [],
    close: async () => undefined,
  };
  let nextNumber = 1;
  const ciRead = (operation: string, ref: string): string | null => {
    const commit = options.repository === undefined ? ref : commitIn(options.repository, ref);
    state.ciReads.push({ operation, ref, commit });
    return commit;
  };
  const html = (kind: string, n: number) => `https://github.example/${options.owner}/${options.repo}/${kind}/${n}`;

  const handlers: Record<(typeof OPERATIONS)[number], (params: Record<string, string>, body: Record<string, unknown>) => Answer> = {
    'issues/create': (_p, body) => {
      const number = nextNumber++;
      const issue: Issue = {
        ...(exampleResponse('issues/create', 201) as Issue),
        id: number * 1000,
        number,
        title: String(body.title),
        body: typeof body.body === 'string' ? body.body : null,
        state: 'open',
        html_url: html('issues', number),
      };
      state.issues.set(number, issue);
      return { status: 201, body: issue };
    },
    'issues/get': (p) => {
      const issue = state.issues.get(Number(p.issue_number));
      return issue ? { status: 200, body: issue } : notFound();
    },
    'issues/update': (p, body) => {
      const issue = state.issues.get(Number(p.issue_number));
      if (!issue) return notFound();
      if (typeof body.title === 'string') issue.title = body.title;
      if (typeof body.body === 'string') issue.body = body.body;
      if (body.state === 'open' || body.state === 'closed') issue.state = body.state;
      return { status: 200, body: issue };
    },
    'issues/create-comment': (p, body) => {
      const number = Number(p.issue_number);
      if (!state.issues.has(number) && !state.pulls.has(number)) return notFound();
      state.comments.push({ issue: number, body: String(body.body) });
      const id = state.comments.length;
      return {
        status: 201,
        body: {
          ...exampleResponse('issues/create-comment', 201),
          id,
          body: String(body.body),
          html_url: `${html('issues', number)}#c${id}`,
        },
      };
    },
    'pulls/create': (_p, body) => {
      const number = nextNumber++;
      const example = exampleResponse('pulls/create', 201) as Pull;
      const pull: Pull = {
        ...example,
        id: number * 1000,
        number,
        title: String(body.title),
        body: typeof body.body === 'string' ? body.body : null,
        state: 'open',
        merged: false,
        html_url: html('pull', number),
        head: { ...example.head, ref: String(body.head), sha: `${String(body.head).replace(/\W/g, '')}-head` },
        base: { ...example.base, ref: String(body.base) },
      };
      state.pulls.set(number, pull);
      return { status: 201, body: pull };
    },
    'pulls/get': (p) => {
      const pull = state.pulls.get(Number(p.pull_number));
      return pull ? { status: 200, body: pull } : notFound();
    },
    'pulls/merge': (p, body) => {
      const pull = state.pulls.get(Number(p.pull_number));
      if (!pull) return notFound();
      if (typeof body.sha === 'string' && body.sha !== pull.head.sha)
        return {
          status: 409,
          body: { message: 'Head branch was modified. Review and try the merge again.', documentation_url: 'https://docs.github.com' },
        };
      pull.merged = true;
      pull.state = 'closed';
      return { status: 200, body: { sha: `${pull.head.sha}-merged`, merged: true, message: 'Pull Request successfully merged' } };
    },
    'checks/list-for-ref': (p) => {
      const ref = decodeURIComponent(p.ref!);
      const commit = ciRead('checks/list-for-ref', ref);
      // A commit the host never received ran no workflow: no check runs.
      if (commit === null) return { status: 200, body: { total_count: 0, check_runs: [] } };
      const runs = (state.checkRuns.get(ref) ?? state.checkRuns.get(commit) ?? state.checkRuns.get('*') ?? []).map((run, i) => ({
        ...(exampleOfComponent('check-run') as CheckRun),
        id: i + 1,
        ...run,
      }));
      return { status: 200, body: { total_count: runs.length, check_runs: runs } };
    },
    'repos/get-combined-status-for-ref': (p) => {
      const example = exampleResponse('repos/get-combined-status-for-ref', 200);
      const ref = decodeURIComponent(p.ref!);
      const commit = ciRead('repos/get-combined-status-for-ref', ref);
      // GitHub's documented answer for a ref it does not have.
      if (commit === null) return notFound();
      const statuses = (state.statuses.get(ref) ?? state.statuses.get(commit) ?? state.statuses.get('*') ?? []).map((s, i) => ({
        ...(exampleOfComponent('simple-commit-status') as Status),
        id: i + 1,
        ...s,
      }));
      const states = statuses.map((s) => s.state);
      const combined = states.some((s) => s === 'failure' || s === 'error')
        ? 'failure'
        : states.some((s) => s === 'pending') || states.length === 0
          ? 'pending'
          : 'success';
      return { status: 200, body: { ...example, state: combined, statuses, total_count: statuses.length, sha: commit } };
    },
    'apps/create-installation-access-token': () => ({ status: 500, body: { message: 'handled before dispatch' } }),
  };

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const send = (op: Operation | undefined, answer: Answer) => {
      if (op) state.violations.push(...checkResponse(op, answer.status, answer.body));
      res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', ...answer.headers });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    };
    const op = ops.find((o) => o.method === req.method && o.pattern.test(url.pathname));
    if (!op) {
      state.violations.push(`${req.method} ${url.pathname}: no operation of GitHub's API the fake models`);
      return send(undefined, { status: 404, body: { message: 'Not Found' } });
    }
    state.calls.push(op.operationId);
    const values = op.pattern.exec(url.pathname)!.slice(1);
    const params = Object.fromEntries(op.pathNames.map((name, i) => [name, values[i]!]));
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      state.violations.push(`${op.operationId}: the request body is not JSON`);
    }
    state.violations.push(...checkRequest(op, url, values, body, raw !== ''));
    if (req.headers.accept === undefined || !String(req.headers.accept).includes('application/vnd.github')) {
      state.violations.push(`${op.operationId}: no GitHub media type in Accept`);
    }
    const queued = state.failNext.get(op.operationId)?.shift();
    if (queued) return send(op, queued);
    const authorization = String(req.headers.authorization ?? '');
    if (op.operationId === 'apps/create-installation-access-token') {
      return send(op, installationToken(options.app, params, authorization, state));
    }
    if (params.owner !== options.owner || params.repo !== options.repo) return send(op, notFound());
    const token = /^(?:token|bearer) (.+)$/i.exec(authorization)?.[1];
    if (!token || !state.tokens.has(token))
      return send(op, { status: 401, body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com' } });
    send(op, handlers[op.operationId as (typeof OPERATIONS)[number]](params, (body ?? {}) as Record<string, unknown>));
  });
  const listening = await listenOnLoopback(server);
  state.url = `${listening.origin}`;
  state.close = listening.close;
  return state;
}

function notFound(): Answer {
  return { status: 404, body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } };
}

/**
 * The App JWT → installation token exchange: the JWT must be RS256-signed by the app's key,
 * name the app as issuer and be unexpired; the token is then accepted on the REST calls.
 */
function installationToken(app: FakeApp | undefined, params: Record<string, string>, authorization: string, state: FakeGitHub): Answer {
  const unauthorized = (message: string): Answer => ({ status: 401, body: { message, documentation_url: 'https://docs.github.com' } });
  if (!app) return unauthorized('no app');
  const jwt = /^bearer (.+)$/i.exec(authorization)?.[1];
  const parts = jwt?.split('.');
  if (parts?.length !== 3) return unauthorized('A JSON web token could not be decoded');
  const [header, payload, signature] = parts as [string, string, string];
  const ok = verify(
    'RSA-SHA256',
    Buffer.from(`${header}.${payload}`),
    createPublicKey(app.publicKeyPem),
    Buffer.from(signature, 'base64url'),
  );
  if (!ok) return unauthorized('A JSON web token could not be decoded (signature)');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { iss?: unknown; exp?: number; iat?: number };
  const now = Math.floor(Date.now() / 1000);
  if (String(claims.iss) !== String(app.appId)) return unauthorized('Integration not found');
  if (typeof claims.exp !== 'number' || claims.exp <= now || claims.exp - (claims.iat ?? 0) > 600)
    return unauthorized("'Expiration time' claim ('exp') is too far in the future or expired");
  if (Number(params.installation_id) !== app.installationId)
    return { status: 404, body: { message: 'Not Found', documentation_url: 'https://docs.github.com' } };
  const token = `ghs_installation_${++state.installationTokensIssued}`;
  state.tokens.add(token);
  const body: InstallationToken = {
    ...(exampleResponse('apps/create-installation-access-token', 201) as InstallationToken),
    token,
    expires_at: new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z'),
  };
  return { status: 201, body };
}
