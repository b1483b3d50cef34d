// Attacks on the gRPC server, each performed over a real connection and refused (issue 24). Browsers cannot speak
// gRPC, so of the shared access policy only the key and bind rules apply: a public bind without keys (an empty key
// counting as none), a call with no key or a wrong one, a keyed caller recorded as the server or running an
// admin-only operation without an admin key, and a proxy on this host making its clients local.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
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
import { startGrpcServer } from './grpcServer.js';
import { loadWorkflowProto } from './proto.js';
import { fromStruct, toStruct } from './struct.js';

const SLUG = '001-login';
const { proto } = loadWorkflowProto();
type CoreClient = InstanceType<typeof proto.switchyard.workflow.v1.CoreService>;

const repo = await tempGitRepo({ prefix: 'grpc-security-' });
// `lead` is an admin by name; the operator's own actor is `operator`, no admin.
const workflow = new Workflow({ store: new MemoryWorkflowStore(), repoName: 'shop', admins: ['lead'] });
await workflow.createFeature({ slug: SLUG, title: 'Log in', actor: 'operator' });
const log = await SubcommandAuditLog.open(repo.root, { repoName: 'shop' });
const dispatchTool = new DispatchTool({
  registry: new SubcommandRegistry(BUILTIN_SUBCOMMANDS),
  log,
  context: { workflow, git: new GitRepository(repo.root), artifacts: new ArtifactStore(join(repo.root, 'artifacts')), actor: 'operator' },
});
const closers: (() => unknown)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
  await log.close();
  await repo.cleanup();
});

/** A server closed after the file, and a client dialling it on loopback. */
async function serve(options: Omit<Parameters<typeof startGrpcServer>[0], 'workflow' | 'dispatchTool'>) {
  const server = await startGrpcServer({ workflow, dispatchTool, onWarning: () => undefined, ...options });
  closers.push(() => server.close());
  const client = new proto.switchyard.workflow.v1.CoreService(`127.0.0.1:${server.port}`, credentials.createInsecure());
  closers.push(() => client.close());
  return { server, client };
}

/** Metadata as a client (or an attacker) sets it. */
function metadata(entries: Record<string, string> = {}): Metadata {
  const m = new Metadata();
  for (const [name, value] of Object.entries(entries)) m.set(name, value);
  return m;
}

/** A unary call: the response, or the ServiceError it ended with. */
function call<Res>(client: CoreClient, method: string, request: object, m = metadata()): Promise<Res> {
  return new Promise((resolve, reject) =>
    (client as unknown as Record<string, (r: object, m: Metadata, cb: (e: ServiceError | null, r: Res) => void) => void>)[method]!(
      request,
      m,
      (error, response) => (error ? reject(error) : resolve(response)),
    ),
  );
}

const refusedWith = (code: status, pattern: RegExp) => (error: unknown) =>
  (error as ServiceError).code === code && pattern.test((error as ServiceError).details);

interface Dispatched {
  ok: boolean;
  error?: { code: string };
  audit: Parameters<typeof fromStruct>[0];
}
const dispatch = (client: CoreClient, args: Record<string, unknown>, m = metadata()) =>
  call<Dispatched>(client, 'DispatchCommand', { args: toStruct(args) }, m);
const actorOf = (answer: Dispatched) => (fromStruct(answer.audit) as { actor: string }).actor;

describe('binds', () => {
  test('a public bind without keys is refused, naming api_keys and --insecure; an empty key is no key', async () => {
    for (const options of [{ host: '0.0.0.0' }, { host: '::' }, { host: '0.0.0.0', apiKeys: [''] }]) {
      await assert.rejects(
        startGrpcServer({ workflow, ...options }),
        (error: unknown) => error instanceof UnsafeBindError && /api_keys/.test(error.message) && /--insecure/.test(error.message),
        JSON.stringify(options),
      );
    }
  });

  test('--insecure serves a public bind without keys, to callers forwarded or not; a keyed public bind needs no --insecure', async () => {
    const warnings: string[] = [];
    const open = await serve({ host: '0.0.0.0', insecure: true, onWarning: (message) => warnings.push(message) });
    assert.match(warnings.join('\n'), /listens on 0\.0\.0\.0 with no client key \(--insecure\): anyone who can reach it/);
    const features = await call<{ features: unknown[] }>(open.client, 'ListFeatures', {}, metadata({ 'x-forwarded-for': '203.0.113.9' }));
    assert.equal(features.features.length, 1);
    const keyed = await serve({ host: '0.0.0.0', apiKeys: ['public-key'] });
    await assert.rejects(call(keyed.client, 'ListFeatures', {}), refusedWith(status.UNAUTHENTICATED, /missing API key/));
  });

  test('a key-less loopback server warns once at start; a keyed one does not', async () => {
    const warnings: string[] = [];
    await serve({ onWarning: (message) => warnings.push(message) });
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.match(warnings[0]!, /gRPC server has no client key/);
    await serve({ apiKeys: ['local-key'], onWarning: (message) => warnings.push(message) });
    assert.equal(warnings.length, 1);
  });
});

describe('a keyed server: no key, no call; the key names the actor, and only an admin key administers', () => {
  let client: CoreClient;
  before(async () => {
    ({ client } = await serve({
      apiKeys: [
        'anonymous-key',
        { key: 'dev-key', name: 'dev' },
        { key: 'lead-key', name: 'lead', admin: true },
        // `ops` is not among the workflow's admins: the key's admin mark makes it one.
        { key: 'ops-key', name: 'ops', admin: true },
      ],
    }));
  });
  const as = (key: string) => metadata({ authorization: `Bearer ${key}` });

  test('a call with no key or a wrong one is UNAUTHENTICATED and dispatches nothing; x-api-key is a key too', async () => {
    const logged = (await log.tail(1000)).length;
    const command = { command: 'branch:list' };
    await assert.rejects(dispatch(client, command), refusedWith(status.UNAUTHENTICATED, /missing API key/));
    await assert.rejects(dispatch(client, command, as('dev-key-guess')), refusedWith(status.UNAUTHENTICATED, /wrong API key/));
    await assert.rejects(dispatch(client, command, metadata({ 'x-api-key': 'nope' })), refusedWith(status.UNAUTHENTICATED, /wrong/));
    assert.equal((await log.tail(1000)).length, logged, 'a refused call runs no subcommand');
    assert.equal(actorOf(await dispatch(client, command, metadata({ 'x-api-key': 'dev-key' }))), 'dev');
  });

  test("DispatchCommand records the key's name as the actor, not the server's", async () => {
    assert.equal(actorOf(await dispatch(client, { command: 'branch:list' }, as('dev-key'))), 'dev');
    assert.equal(actorOf(await dispatch(client, { command: 'branch:list' }, as('anonymous-key'))), 'key-1');
    const [last] = await log.tail(1);
    assert.equal(last?.actor, 'key-1', 'the audit log agrees');
  });

  test('an admin-only operation is refused without an admin key, and runs with one', async () => {
    const enforce = { command: 'governance:enforce', feature_slug: SLUG, rule: 'wp-ci-before-review', action: 'disable' };
    for (const key of ['dev-key', 'anonymous-key']) {
      const refused = await dispatch(client, enforce, as(key));
      assert.deepEqual([refused.ok, refused.error?.code], [false, 'forbidden'], key);
    }
    const allowed = await dispatch(client, enforce, as('lead-key'));
    assert.equal(allowed.ok, true, JSON.stringify(allowed.error));
    assert.equal(actorOf(allowed), 'lead');
    const byMark = await dispatch(client, { ...enforce, action: 'reset' }, as('ops-key'));
    assert.equal(byMark.ok, true, JSON.stringify(byMark.error));
    assert.equal(actorOf(byMark), 'ops');
  });
});

describe('a key-less server on loopback: this machine only', () => {
  let client: CoreClient;
  const warnings: string[] = [];
  before(async () => {
    ({ client } = await serve({ onWarning: (message) => warnings.push(message) }));
  });

  test('a local caller acts as the server, and may not administer as anyone else', async () => {
    const answer = await dispatch(client, { command: 'branch:list' });
    assert.equal(actorOf(answer), 'operator');
    // A key-less server knows no keys: one sent along claims nobody's name.
    const claimed = await dispatch(client, { command: 'branch:list' }, metadata({ authorization: 'Bearer lead-key' }));
    assert.equal(actorOf(claimed), 'operator');
    const enforce = { command: 'governance:enforce', feature_slug: SLUG, rule: 'wp-ci-before-review', action: 'enable' };
    const refused = await dispatch(client, enforce);
    assert.deepEqual([refused.ok, refused.error?.code], [false, 'forbidden'], 'operator is no admin');
  });

  test('a call a proxy on this host forwarded is refused, and the log says so once', async () => {
    const before = warnings.length;
    for (const header of ['x-forwarded-for', 'forwarded', 'x-real-ip']) {
      await assert.rejects(
        call(client, 'ListFeatures', {}, metadata({ [header]: header === 'forwarded' ? 'for=203.0.113.9' : '203.0.113.9' })),
        refusedWith(status.UNAUTHENTICATED, /forwarded by a proxy/),
        header,
      );
    }
    const forwarded = warnings.slice(before).filter((w) => /forwarded by .* counts as remote/.test(w));
    assert.equal(forwarded.length, 1, `one warning a minute, whatever the flood: ${JSON.stringify(warnings)}`);
    assert.equal((await call<{ features: unknown[] }>(client, 'ListFeatures', {})).features.length, 1, 'unforwarded, it is served');
  });
});
