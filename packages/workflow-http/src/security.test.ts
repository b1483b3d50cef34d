// Attacks on the workflow HTTP API, each performed over a real socket and refused: a public bind without keys,
// DNS rebinding (a foreign Host), a cross-site page (Origin, form bodies), a reverse proxy on the same host,
// and a keyed caller acting as someone else or as an admin it is not.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { UnsafeBindError } from '@switchyard/http-kit';
import { tempGitRepo } from '@switchyard/test-support';
import {
  BUILTIN_SUBCOMMANDS,
  DispatchTool,
  MemoryWorkflowStore,
  SubcommandAuditLog,
  SubcommandRegistry,
  Workflow,
} from '@switchyard/workflow';
import { ArtifactStore, GitRepository } from '@switchyard/workflow/git';
import { startWorkflowHttpServer, type WorkflowHttpServer } from './workflowServer.js';

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** A raw request, so the test sets Host, Origin and forwarding headers as an attacker would. */
function send(server: WorkflowHttpServer, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        method,
        path,
        headers: { ...headers, ...(body ? { 'content-length': Buffer.byteLength(body) } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const errorCode = (answer: Answer) => (answer.body.error as { code?: string } | undefined)?.code;
const envelope = (command: string, args: Record<string, unknown> = {}) =>
  JSON.stringify({ command: 'dispatch_command', args: { command, ...args } });

const repo = await tempGitRepo({ prefix: 'workflow-security-' });
// `lead` is an admin by name; the operator's own actor is `operator`.
const workflow = new Workflow({ store: new MemoryWorkflowStore(), repoName: 'shop', admins: ['lead'] });
const log = await SubcommandAuditLog.open(repo.root, { repoName: 'shop' });
const tool = new DispatchTool({
  registry: new SubcommandRegistry(BUILTIN_SUBCOMMANDS),
  log,
  context: { workflow, git: new GitRepository(repo.root), artifacts: new ArtifactStore(join(repo.root, 'artifacts')), actor: 'operator' },
});
after(async () => {
  await log.close();
  await repo.cleanup();
});

describe('binds', () => {
  test('a public bind without keys is refused before it listens; --insecure serves it; a loopback bind warns', async () => {
    await assert.rejects(
      startWorkflowHttpServer({ workflow, host: '0.0.0.0', port: 0 }),
      (error: unknown) => error instanceof UnsafeBindError && /api_keys/.test(error.message),
    );
    const openWarnings: string[] = [];
    const open = await startWorkflowHttpServer({
      workflow,
      host: '0.0.0.0',
      port: 0,
      insecure: true,
      onWarning: (m) => openWarnings.push(m),
    });
    await open.close();
    assert.equal(openWarnings.length, 1, 'an open public bind is warned of');
    assert.match(openWarnings[0]!, /listens on 0\.0\.0\.0 with no client key \(--insecure\): anyone who can reach it/);
    const warnings: string[] = [];
    const local = await startWorkflowHttpServer({ workflow, port: 0, onWarning: (message) => warnings.push(message) });
    await local.close();
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /no client key/);
  });
});

test('--insecure on a public bind serves callers on other machines, by any name; a key-less server without it refuses them', async () => {
  // A peer no test can be: the request reaches the API as node:http would hand it over from another machine.
  const fromElsewhere = (host: string) => ({ incoming: { socket: { remoteAddress: '203.0.113.9' }, headers: { host } } });
  const open = await startWorkflowHttpServer({ workflow, host: '0.0.0.0', port: 0, insecure: true, onWarning: () => undefined });
  try {
    const served = await open.app.request('/features', { headers: { host: '198.51.100.4:8080' } }, fromElsewhere('198.51.100.4:8080'));
    assert.equal(served.status, 200, await served.text());
  } finally {
    await open.close();
  }
  const local = await startWorkflowHttpServer({ workflow, port: 0, onWarning: () => undefined });
  try {
    const refused = await local.app.request('/features', { headers: { host: '127.0.0.1:8080' } }, fromElsewhere('127.0.0.1:8080'));
    assert.equal(refused.status, 403);
  } finally {
    await local.close();
  }
});

describe('a key-less server on loopback: this machine only, and no web page', () => {
  let server: WorkflowHttpServer;
  const warnings: string[] = [];
  before(async () => {
    server = await startWorkflowHttpServer({ workflow, dispatchTool: tool, port: 0, onWarning: (message) => warnings.push(message) });
  });
  after(() => server.close());
  const host = () => `127.0.0.1:${server.port}`;

  test('DNS rebinding: a foreign Host reads nothing and dispatches nothing', async () => {
    const read = await send(server, 'GET', '/features', { host: 'rebind.evil.example' });
    assert.deepEqual([read.status, errorCode(read)], [403, 'forbidden']);
    const write = await send(
      server,
      'POST',
      '/dispatch',
      { host: `rebind.evil.example:${server.port}`, 'content-type': 'application/json' },
      envelope('artifact:read', { feature_slug: 'x', path: '.git/config' }),
    );
    assert.deepEqual([write.status, errorCode(write)], [403, 'forbidden']);
    assert.equal((await send(server, 'GET', '/features', { host: host() })).status, 200, 'the real name is served');
  });

  test('a cross-origin page cannot dispatch, with JSON or with a form', async () => {
    const json = await send(
      server,
      'POST',
      '/dispatch',
      { host: host(), origin: 'http://evil.example', 'content-type': 'application/json' },
      envelope('branch:list'),
    );
    assert.deepEqual([json.status, errorCode(json)], [403, 'forbidden']);
    const form = await send(server, 'POST', '/dispatch', { host: host(), 'content-type': 'text/plain' }, envelope('branch:list'));
    assert.deepEqual([form.status, errorCode(form)], [415, 'unsupported_media_type']);
    const ok = await send(server, 'POST', '/dispatch', { host: host(), 'content-type': 'application/json' }, envelope('branch:list'));
    assert.equal(ok.status, 200);
    assert.equal((ok.body.audit as { actor: string }).actor, 'operator', 'a key-less local caller acts as the server');
  });

  test('a reverse proxy on this host does not make its clients local', async () => {
    for (const header of ['x-forwarded-for', 'forwarded', 'x-real-ip']) {
      const answer = await send(server, 'GET', '/features', {
        host: host(),
        [header]: header === 'forwarded' ? 'for=203.0.113.9' : '203.0.113.9',
      });
      assert.deepEqual([answer.status, errorCode(answer)], [403, 'forbidden'], header);
    }
    const forwarded = warnings.filter((w) => /forwarded by .* counts as remote/.test(w));
    assert.equal(forwarded.length, 1, `one warning a minute, whatever the flood: ${JSON.stringify(warnings)}`);
  });
});

describe('a keyed server: the key names the actor, and only an admin key administers', () => {
  let server: WorkflowHttpServer;
  before(async () => {
    server = await startWorkflowHttpServer({
      workflow,
      dispatchTool: tool,
      host: '127.0.0.1',
      port: 0,
      apiKeys: [
        'anonymous-key',
        { key: 'dev-key', name: 'dev' },
        { key: 'lead-key', name: 'lead', admin: true },
        { key: 'ops-key', name: 'ops', admin: true },
      ],
    });
  });
  after(() => server.close());
  const dispatch = (key: string, body: string) =>
    send(
      server,
      'POST',
      '/dispatch',
      { host: `127.0.0.1:${server.port}`, authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
    );

  test("a named key's calls are recorded under its name, not the server's", async () => {
    const answer = await dispatch('dev-key', envelope('branch:list'));
    assert.equal(answer.body.ok, true, JSON.stringify(answer.body));
    assert.equal((answer.body.audit as { actor: string }).actor, 'dev');
    const bare = await dispatch('anonymous-key', envelope('branch:list'));
    assert.equal((bare.body.audit as { actor: string }).actor, 'key-1');
    const [last] = await log.tail(1);
    assert.equal(last?.actor, 'key-1', 'the audit log agrees');
  });

  test('an admin-only operation is refused without an admin key, and runs with one', async () => {
    await workflow.createFeature({ slug: '001-login', title: 'Log in', actor: 'operator' });
    const enforce = { feature_slug: '001-login', rule: 'wp-ci-before-review', action: 'disable' };
    const refused = await dispatch('dev-key', envelope('governance:enforce', enforce));
    assert.equal(refused.body.ok, false, JSON.stringify(refused.body));
    assert.equal((refused.body.error as { code: string }).code, 'forbidden');
    const allowed = await dispatch('lead-key', envelope('governance:enforce', enforce));
    assert.equal(allowed.body.ok, true, JSON.stringify(allowed.body));
    assert.equal((allowed.body.audit as { actor: string }).actor, 'lead');
  });

  test("a key marked admin administers though its name is not in the workflow's admins", async () => {
    await workflow.createFeature({ slug: '002-ops', title: 'Ops', actor: 'operator' });
    const enforce = { feature_slug: '002-ops', rule: 'wp-ci-before-review', action: 'disable' };
    const allowed = await dispatch('ops-key', envelope('governance:enforce', enforce));
    assert.equal(allowed.body.ok, true, JSON.stringify(allowed.body));
    assert.equal((allowed.body.audit as { actor: string }).actor, 'ops');
  });

  test('a keyed caller is judged on its key: a foreign Host with a valid key is served, without one it is 401', async () => {
    const keyed = await send(server, 'GET', '/features', { host: 'gw.example.com', authorization: 'Bearer dev-key' });
    assert.equal(keyed.status, 200);
    const anonymous = await send(server, 'GET', '/features', { host: `127.0.0.1:${server.port}` });
    assert.equal(anonymous.status, 401);
  });
});
