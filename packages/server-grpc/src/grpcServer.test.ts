import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { eventually, tempGitRepo } from '@switchyard/test-support';
import {
  AgentDispatcher,
  BUILTIN_SUBCOMMANDS,
  DispatchTool,
  HeuristicReviewer,
  MemoryWorkflowStore,
  SubcommandAuditLog,
  SubcommandRegistry,
  Workflow,
} from '@switchyard/workflow';
import { ArtifactStore, GitRepository } from '@switchyard/workflow/git';
import { AgentHub } from './agentHub.js';
import type { AgentEvent__Output } from './generated/switchyard/workflow/v1/AgentEvent.js';
import type { AuditEntry__Output } from './generated/switchyard/workflow/v1/AuditEntry.js';
import type { Prompt__Output } from './generated/switchyard/workflow/v1/Prompt.js';
import { decodeStatusDetails } from './grpcErrors.js';
import { type GrpcServer, startGrpcServer } from './grpcServer.js';
import { loadWorkflowProto } from './proto.js';
import { fromStruct, fromValue, toStruct } from './struct.js';

const SLUG = '001-login';
let root: string;
let server: GrpcServer;
let workflow: Workflow;
let log: SubcommandAuditLog;
let hub: AgentHub;
let dispatcher: AgentDispatcher;
const { proto } = loadWorkflowProto();
let core: InstanceType<typeof proto.switchyard.workflow.v1.CoreService>;
let agents: InstanceType<typeof proto.switchyard.workflow.v1.AgentService>;
const auth = () => {
  const m = new Metadata();
  m.set('authorization', 'Bearer grpc-key');
  return m;
};

/** Calls a unary method and resolves with its response, or rejects with the ServiceError. */
function call<Req, Res>(client: object, method: string, request: Req, metadata = auth()): Promise<Res> {
  return new Promise((resolve, reject) =>
    (client as Record<string, (r: Req, m: Metadata, cb: (e: ServiceError | null, r: Res) => void) => void>)[method]!(
      request,
      metadata,
      (e, r) => (e ? reject(e) : resolve(r)),
    ),
  );
}

before(async () => {
  root = (await tempGitRepo({ prefix: 'grpc-', readmeVersions: ['# x\n'] })).root;
  workflow = new Workflow({ store: new MemoryWorkflowStore(), repoName: 'shop', admins: ['lead'] });
  await workflow.createFeature({ slug: SLUG, title: 'Log in', actor: 'alice' });
  await workflow.advance(SLUG, 'specify', { actor: 'alice' });
  await workflow.createWorkPackage(SLUG, { title: 'Form', actor: 'alice' });
  await workflow.createWorkPackage(SLUG, { title: 'Docs', depends_on: [1], actor: 'alice' });
  log = await SubcommandAuditLog.open(root, { repoName: 'shop' });
  const gitRepo = new GitRepository(root);
  const tool = new DispatchTool({
    registry: new SubcommandRegistry(BUILTIN_SUBCOMMANDS),
    log,
    context: { workflow, git: gitRepo, artifacts: new ArtifactStore(join(root, '.agileplus', 'artifacts')), actor: 'grpc' },
  });
  hub = new AgentHub({ heartbeatIntervalMs: 60_000 });
  dispatcher = new AgentDispatcher({ workflow, git: gitRepo, reviewer: new HeuristicReviewer(), adapters: [hub] });
  server = await startGrpcServer({
    workflow,
    dispatchTool: tool,
    agentHub: hub,
    apiKeys: ['grpc-key'],
  });
  core = new proto.switchyard.workflow.v1.CoreService(server.address, credentials.createInsecure());
  agents = new proto.switchyard.workflow.v1.AgentService(server.address, credentials.createInsecure());
});

after(async () => {
  core?.close();
  agents?.close();
  await server?.close();
  await log?.close();
  await rm(root, { recursive: true, force: true });
});

describe('CoreService', { concurrency: 1 }, () => {
  test('GetFeature, ListFeatures and GetFeatureState', async () => {
    const feature = await call<object, { slug: string; state: string; id: number }>(core, 'GetFeature', { slug: SLUG });
    assert.deepEqual([feature.slug, feature.state, feature.id], [SLUG, 'SPECIFIED', 1]);
    const list = await call<object, { features: { slug: string }[] }>(core, 'ListFeatures', {});
    assert.deepEqual(
      list.features.map((f) => f.slug),
      [SLUG],
    );
    assert.deepEqual((await call<object, { features: unknown[] }>(core, 'ListFeatures', { state: 'SHIPPED' })).features, []);
    const state = await call<object, Record<string, unknown>>(core, 'GetFeatureState', { slug: SLUG });
    assert.deepEqual([state.state, state.next_state, state.next_command], ['SPECIFIED', 'RESEARCHED', 'research']);
  });

  test('ListWorkPackages (with waves) and GetWorkPackageStatus', async () => {
    const list = await call<object, { work_packages: { sequence: number; depends_on: number[] }[]; waves: { sequences: number[] }[] }>(
      core,
      'ListWorkPackages',
      { slug: SLUG },
    );
    assert.deepEqual(
      list.work_packages.map((w) => [w.sequence, w.depends_on]),
      [
        [1, []],
        [2, [1]],
      ],
    );
    assert.deepEqual(
      list.waves.map((w) => w.sequences),
      [[1], [2]],
    );
    const second = await call<object, { ready: boolean; waiting_on: number[]; work_package: { state: string } }>(
      core,
      'GetWorkPackageStatus',
      {
        slug: SLUG,
        sequence: 2,
      },
    );
    assert.deepEqual([second.ready, second.waiting_on, second.work_package.state], [false, [1], 'PLANNED']);
  });

  test('CheckGovernanceGate: passes, or lists violations', async () => {
    const next = await call<object, { passed: boolean; transition: string }>(core, 'CheckGovernanceGate', { slug: SLUG });
    assert.deepEqual([next.passed, next.transition], [true, 'SPECIFIED -> RESEARCHED']);
    await workflow.transitionWorkPackage(SLUG, 1, { to: 'DOING', actor: 'bob' });
    const wp = await call<object, { passed: boolean; violations: { rule_id: string }[] }>(core, 'CheckGovernanceGate', {
      slug: SLUG,
      wp_sequence: 1,
    });
    assert.deepEqual([wp.passed, wp.violations.map((v) => v.rule_id)], [false, ['wp-ci-before-review']]);
  });

  test('a sequence below 1 is INVALID_ARGUMENT naming the field in every call that takes one, not NOT_FOUND', async () => {
    const refusals = [
      ['GetWorkPackageStatus', { slug: SLUG, sequence: 0 }, 'sequence'],
      ['GetWorkPackageStatus', { slug: SLUG, sequence: -1 }, 'sequence'],
      ['CheckGovernanceGate', { slug: SLUG, wp_sequence: 0 }, 'wp_sequence'],
      ['CheckGovernanceGate', { slug: SLUG, wp_sequence: -1 }, 'wp_sequence'],
    ] as const;
    for (const [method, request, field] of refusals) {
      const refused = (await call(core, method, request).catch((e: ServiceError) => e)) as ServiceError;
      const label = `${method} ${JSON.stringify(request)}`;
      assert.equal(refused.code, status.INVALID_ARGUMENT, label);
      assert.deepEqual(
        decodeStatusDetails(refused.metadata)?.field_violations.map((f) => f.field),
        [field],
        label,
      );
    }
  });

  test('GetAuditTrail streams the chain, oldest first; VerifyAuditChain checks it', async () => {
    const entries: AuditEntry__Output[] = await new Promise((resolve, reject) => {
      const out: AuditEntry__Output[] = [];
      core
        .GetAuditTrail({ slug: SLUG }, auth())
        .on('data', (e: AuditEntry__Output) => out.push(e))
        .on('end', () => resolve(out))
        .on('error', reject);
    });
    assert.deepEqual(
      entries.map((e) => e.transition),
      ['NONE -> CREATED', 'CREATED -> SPECIFIED', 'NONE -> PLANNED', 'NONE -> PLANNED', 'PLANNED -> DOING'],
    );
    assert.equal(entries[2]!.wp_sequence, 1);
    assert.equal(entries[0]!.wp_sequence, undefined, 'null stays unset');
    const newest = await new Promise<AuditEntry__Output[]>((resolve) => {
      const out: AuditEntry__Output[] = [];
      core
        .GetAuditTrail({ slug: SLUG, limit: 2 }, auth())
        .on('data', (e: AuditEntry__Output) => out.push(e))
        .on('end', () => resolve(out));
    });
    assert.deepEqual(
      newest.map((e) => e.id),
      [4, 5],
    );
    const verification = await call<object, { valid: boolean; entries_verified: number; origin: string }>(core, 'VerifyAuditChain', {
      slug: SLUG,
    });
    assert.deepEqual([verification.valid, verification.entries_verified, verification.origin], [true, 5, `workflow:shop/${SLUG}`]);
  });

  test('DispatchCommand runs a subcommand through the dispatch tool; a failed one is a result, not a status', async () => {
    const ok = await call<object, { ok: boolean; command: string; result: never; audit: never }>(core, 'DispatchCommand', {
      feature_slug: SLUG,
      args: toStruct({ command: 'artifact:write', 'relative-path': 'spec.md', content: '# Spec\n' }),
    });
    assert.deepEqual([ok.ok, ok.command], [true, 'artifact:write']);
    assert.deepEqual((fromValue(ok.result) as { path: string }).path, `${SLUG}/spec.md`);
    assert.equal(fromStruct(ok.audit).command, 'artifact:write');
    const bad = await call<object, { ok: boolean; exit_code: number; error: { code: string } }>(core, 'DispatchCommand', {
      args: toStruct({ command: 'branch:create', name: '--upload-pack=x' }),
    });
    assert.deepEqual([bad.ok, bad.exit_code, bad.error.code], [false, 2, 'unsafe_argument']);
    // An argument under its deprecated name runs, and the answer carries the warning (as the audit line does).
    const aliased = await call<object, { ok: boolean; warnings: string[]; audit: never }>(core, 'DispatchCommand', {
      args: toStruct({ command: 'diff:show', context: 1, from: 'HEAD', to: 'HEAD' }),
    });
    assert.deepEqual(
      [aliased.ok, aliased.warnings],
      [true, ['diff:show: context is deprecated; use unified (--context is now --unified)']],
    );
    assert.deepEqual(fromStruct(aliased.audit).warnings, aliased.warnings);
    assert.deepEqual(
      (await call<object, { warnings: string[] }>(core, 'DispatchCommand', { args: toStruct({ command: 'branch:list' }) })).warnings,
      [],
    );
  });

  test('errors map to gRPC codes, with the field or the violations in the details', async () => {
    const missing = await call(core, 'GetFeature', { slug: 'nope' }).catch((e: ServiceError) => e);
    assert.equal((missing as ServiceError).code, status.NOT_FOUND);
    assert.equal((missing as ServiceError).metadata.get('switchyard-error-code')[0], 'not_found');
    const invalid = (await call(core, 'GetFeature', { slug: 'Not A Slug' }).catch((e: ServiceError) => e)) as ServiceError;
    assert.equal(invalid.code, status.INVALID_ARGUMENT);
    assert.deepEqual(
      decodeStatusDetails(invalid.metadata)?.field_violations.map((f) => f.field),
      ['slug'],
    );
    const refused = (await call(core, 'CheckGovernanceGate', { slug: SLUG, wp_sequence: 1, to: 'DONE' }).catch(
      (e: ServiceError) => e,
    )) as ServiceError;
    assert.equal(refused.code, status.FAILED_PRECONDITION, 'DOING -> DONE is not a move');
    const gate = await workflow.transitionWorkPackage(SLUG, 1, { to: 'REVIEW', actor: 'bob' }).catch((e) => e);
    const { toServiceError } = await import('./grpcErrors.js');
    const mapped = toServiceError(gate);
    assert.equal(mapped.code, status.FAILED_PRECONDITION);
    const details = decodeStatusDetails(mapped.metadata);
    assert.deepEqual(
      details?.violations.map((v) => [v.type, v.subject]),
      [['GOVERNANCE_GATE', 'wp-ci-before-review']],
    );
    const unauthenticated = (await call(core, 'GetFeature', { slug: SLUG }, new Metadata()).catch((e: ServiceError) => e)) as ServiceError;
    assert.equal(unauthenticated.code, status.UNAUTHENTICATED);
    const wrong = new Metadata();
    wrong.set('x-api-key', 'nope');
    assert.equal(
      ((await call(core, 'GetFeature', { slug: SLUG }, wrong).catch((e: ServiceError) => e)) as ServiceError).code,
      status.UNAUTHENTICATED,
    );
  });
});

describe('a refused stream ends with its status', () => {
  /** The status a server stream ends with; the deadline turns a stream that never ends into DEADLINE_EXCEEDED. */
  const ending = (client: object, method: string, request: object, metadata = auth()) =>
    new Promise<{ code: number; error: string | undefined }>((resolve) => {
      const stream = (client as Record<string, (r: object, m: Metadata, o: object) => NodeJS.ReadableStream>)[method]!(request, metadata, {
        deadline: Date.now() + 5000,
      });
      stream.on('data', () => undefined);
      stream.on('error', (e: ServiceError) => resolve({ code: e.code, error: e.metadata.get('switchyard-error-code')[0] as string }));
      stream.on('end', () => resolve({ code: status.OK, error: undefined }));
    });

  test('GetAuditTrail, StreamAgentEvents and ReceivePrompts: not found, bad input, a missing key', async () => {
    assert.deepEqual(await ending(core, 'GetAuditTrail', { slug: 'nope' }), { code: status.NOT_FOUND, error: 'not_found' });
    assert.deepEqual(await ending(core, 'GetAuditTrail', { slug: 'Bad Slug' }), {
      code: status.INVALID_ARGUMENT,
      error: 'invalid_argument',
    });
    assert.deepEqual(await ending(core, 'GetAuditTrail', { slug: SLUG }, new Metadata()), {
      code: status.UNAUTHENTICATED,
      error: 'unauthenticated',
    });
    assert.deepEqual(await ending(core, 'StreamAgentEvents', { job_id: '00000000-0000-4000-8000-000000000000' }), {
      code: status.NOT_FOUND,
      error: 'not_found',
    });
    assert.equal((await ending(agents, 'ReceivePrompts', { session_id: 'no-such-session' })).code, status.NOT_FOUND);
    assert.deepEqual(await ending(core, 'StreamAgentEvents', { feature_slug: 'Bad Slug' }), {
      code: status.INVALID_ARGUMENT,
      error: 'invalid_argument',
    });
    assert.deepEqual(await ending(core, 'StreamAgentEvents', { feature_slug: '999-nope' }), { code: status.NOT_FOUND, error: 'not_found' });
  });

  test('StreamAgentEvents repeats at most 128 characters of an unknown job_id back', async () => {
    const refused = await new Promise<ServiceError>((resolve) => {
      const stream = core.StreamAgentEvents({ job_id: 'j'.repeat(100_000) }, auth(), { deadline: Date.now() + 5000 });
      stream.on('data', () => undefined);
      stream.on('error', resolve);
    });
    assert.equal(refused.code, status.NOT_FOUND);
    assert.equal(refused.details, `job "${'j'.repeat(128)}…" does not exist`);
  });
});

describe('StreamAgentEvents under load and races', { concurrency: 1 }, () => {
  let edgeWorkflow: Workflow;
  let edgeServer: GrpcServer;
  let edgeCore: InstanceType<typeof proto.switchyard.workflow.v1.CoreService>;
  before(async () => {
    edgeWorkflow = new Workflow({ store: new MemoryWorkflowStore(), repoName: 'shop' });
    await edgeWorkflow.createFeature({ slug: SLUG, title: 'Log in', actor: 'alice' });
    edgeServer = await startGrpcServer({ workflow: edgeWorkflow, maxStreamBacklogBytes: 64 * 1024 });
    edgeCore = new proto.switchyard.workflow.v1.CoreService(edgeServer.address, credentials.createInsecure());
  });
  after(async () => {
    edgeCore?.close();
    await edgeServer?.close();
  });
  const listeners = () => edgeWorkflow.events.listenerCount('workflow:agent_event');
  // As the dispatcher does: the event is stored (where every server streams it from), then announced.
  const emit = async (jobId: string, kind: 'output' | 'status', data: Record<string, unknown>) => {
    const event = { jobId, featureSlug: SLUG, wpSequence: 1, kind, data, at: Date.now() };
    edgeWorkflow.events.emit('workflow:agent_event', await edgeWorkflow.store.transact((tx) => tx.appendAgentEvent(event)));
  };

  test('a reader that stops reading is cut past the backlog bound: the server stops buffering, the reader learns why', async () => {
    const stream = edgeCore.StreamAgentEvents({ feature_slug: SLUG }, new Metadata());
    let received = 0;
    const ended = new Promise<number>((resolve) => {
      stream.on('error', (e: ServiceError) => resolve(e.code));
      stream.on('end', () => resolve(status.OK));
    });
    stream.on('data', () => {
      received++;
      if (received === 1) stream.pause();
    });
    await eventually('the subscription', () => listeners() === 1);
    const chunk = 'x'.repeat(1024);
    const sent = 20_000;
    for (let i = 0; i < sent && listeners() > 0; i++) {
      await emit('job-flood', 'output', { chunk });
      // Let the transport move what the reader's flow-control window takes.
      if (i % 200 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    assert.equal(listeners(), 0, 'the server stopped queueing events for the reader that fell behind');
    stream.resume();
    assert.equal(await ended, status.RESOURCE_EXHAUSTED);
    assert.ok(received < sent, `${received} of ${sent} events`);
  });

  test('a job that ends while its stream starts still ends the stream', async () => {
    const jobId = '00000000-0000-4000-8000-0000000000aa';
    const now = new Date().toISOString();
    await edgeWorkflow.store.transact((tx) =>
      tx.insertJob({
        id: jobId,
        feature_slug: SLUG,
        wp_sequence: 1,
        kind: 'remote',
        state: 'Running',
        review_cycles: 0,
        max_review_cycles: 1,
        outcome: null,
        result: null,
        error: null,
        created_at: now,
        updated_at: now,
        started_at: now,
        finished_at: null,
      }),
    );
    const reader = edgeWorkflow.store.reader;
    const getJob = reader.getJob.bind(reader);
    // The server reads the job as running; its final status is announced before the read returns.
    reader.getJob = async (id) => {
      const job = await getJob(id);
      await emit(jobId, 'status', { state: 'Completed', outcome: 'approved' });
      return job;
    };
    try {
      const events = await new Promise<AgentEvent__Output[]>((resolve, reject) => {
        const out: AgentEvent__Output[] = [];
        edgeCore
          .StreamAgentEvents({ job_id: jobId }, new Metadata(), { deadline: Date.now() + 5000 })
          .on('data', (e: AgentEvent__Output) => out.push(e))
          .on('end', () => resolve(out))
          .on('error', reject);
      });
      assert.deepEqual(
        events.map((e) => [e.kind, fromStruct(e.data).state]),
        [['status', 'Completed']],
      );
      assert.equal(listeners(), 0);
    } finally {
      reader.getJob = getJob;
    }
  });
});

describe('AgentService and StreamAgentEvents', { concurrency: 1 }, () => {
  test('an unknown id of any length is NOT_FOUND at once, its status message bounded (not a status too large to send)', {
    timeout: 15_000,
  }, async () => {
    const huge = 's'.repeat(100_000);
    const refusal = (method: string, request: object) =>
      new Promise<ServiceError>((resolve) =>
        (agents as unknown as Record<string, (...args: unknown[]) => void>)[method]!(
          request,
          auth(),
          { deadline: Date.now() + 5000 },
          (e: ServiceError | null) => resolve(e!),
        ),
      );
    for (const [method, request] of [
      ['Heartbeat', { session_id: huge }],
      ['StartSession', { agent_id: huge }],
    ] as const) {
      const refused = await refusal(method, request);
      assert.equal(refused.code, status.NOT_FOUND, `${method}: ${refused.details.slice(0, 80)}`);
      assert.ok(refused.details.length <= 1025, `${method}: ${refused.details.length} characters`);
      assert.ok(refused.details.endsWith('…'), `${method}: says it was cut`);
    }
  });

  test('a bad agent name is INVALID_ARGUMENT naming the field, like every other bad input', async () => {
    const bad = (await call(agents, 'RegisterAgent', { name: '', agent_type: 'codex' }).catch((e: ServiceError) => e)) as ServiceError;
    assert.equal(bad.code, status.INVALID_ARGUMENT);
    assert.deepEqual(
      decodeStatusDetails(bad.metadata)?.field_violations.map((f) => f.field),
      ['name'],
    );
  });

  test('a remote agent registers, starts a session, receives the prompt, reports output, completes; the job streams its events', async () => {
    await workflow.governance.enforce('wp-ci-before-review', 'disable', 'lead');
    const { agent_id } = await call<object, { agent_id: string }>(agents, 'RegisterAgent', { name: 'remote-1', agent_type: 'codex' });
    const session = await call<object, { session_id: string; heartbeat_interval_ms: number }>(agents, 'StartSession', { agent_id });
    assert.equal(session.heartbeat_interval_ms, 60_000);
    const prompts = agents.ReceivePrompts({ session_id: session.session_id }, auth());
    const received: Prompt__Output[] = [];
    prompts.on('data', (prompt: Prompt__Output) => {
      received.push(prompt);
      if (prompt.kind !== 'task') return;
      void (async () => {
        mkdirSync(join(prompt.worktree, 'src'), { recursive: true });
        writeFileSync(join(prompt.worktree, 'src', 'form.ts'), 'export const form = 1;\n');
        writeFileSync(join(prompt.worktree, 'src', 'form.test.ts'), "import './form.js';\n");
        execFileSync('git', ['add', '-A'], { cwd: prompt.worktree });
        execFileSync('git', ['commit', '--quiet', '-m', 'form'], { cwd: prompt.worktree });
        await call(agents, 'ReportOutput', { session_id: session.session_id, task_id: prompt.task_id, chunk: 'wrote the form\n' });
        assert.equal((await call<object, { state: string }>(agents, 'Heartbeat', { session_id: session.session_id })).state, 'busy');
        await call(agents, 'CompleteTask', {
          session_id: session.session_id,
          task_id: prompt.task_id,
          exit_code: 0,
          pr_url: 'https://example.invalid/pr/9',
        });
      })();
    });
    prompts.on('error', () => undefined);
    // No pause for the subscription to land: a job dispatched before it waits for the session to listen.
    // Package 1 is DOING from the gate test above; the loop continues from there.
    const job = await dispatcher.dispatch(SLUG, 1, { kind: 'remote', review_cycles: 1 });
    const events: AgentEvent__Output[] = await new Promise((resolve, reject) => {
      const out: AgentEvent__Output[] = [];
      core
        .StreamAgentEvents({ job_id: job.id }, auth())
        .on('data', (e: AgentEvent__Output) => out.push(e))
        .on('end', () => resolve(out))
        .on('error', reject);
    });
    const done = await dispatcher.wait(job.id);
    assert.deepEqual([done.state, done.outcome, done.result?.pr_url], ['Completed', 'approved', 'https://example.invalid/pr/9']);
    assert.equal(received[0]!.feature_slug, SLUG);
    assert.equal(received[0]!.wp_sequence, 1);
    const kinds = events.map((e) => e.kind);
    assert.ok(kinds.includes('output') && kinds.includes('transition') && kinds.includes('review'), kinds.join(','));
    assert.equal(fromStruct(events.find((e) => e.kind === 'output')!.data).chunk, 'wrote the form\n');
    assert.deepEqual(fromStruct(events.at(-1)!.data).state, 'Completed', 'the stream ends after the final status');
    const replay = await new Promise<AgentEvent__Output[]>((resolve) => {
      const out: AgentEvent__Output[] = [];
      core
        .StreamAgentEvents({ job_id: job.id }, auth())
        .on('data', (e: AgentEvent__Output) => out.push(e))
        .on('end', () => resolve(out));
    });
    // Events are stored: a later reader gets the job's whole stream again, and resumes after any event it saw.
    assert.deepEqual(
      replay.map((e) => e.id),
      events.map((e) => e.id),
    );
    const middle = Number(events[2]!.id);
    const resumed = await new Promise<AgentEvent__Output[]>((resolve) => {
      const out: AgentEvent__Output[] = [];
      core
        .StreamAgentEvents({ job_id: job.id, after_event_id: middle }, auth())
        .on('data', (e: AgentEvent__Output) => out.push(e))
        .on('end', () => resolve(out));
    });
    assert.deepEqual(
      resumed.map((e) => Number(e.id)),
      events.map((e) => Number(e.id)).filter((id) => id > middle),
    );
    assert.deepEqual(fromStruct(resumed.at(-1)!.data).state, 'Completed');
    await call(agents, 'EndSession', { session_id: session.session_id, reason: 'done' });
    const gone = (await call(agents, 'Heartbeat', { session_id: session.session_id }).catch((e: ServiceError) => e)) as ServiceError;
    assert.equal(gone.code, status.NOT_FOUND);
  });
});

describe('standard services', () => {
  test('health checking reports SERVING, and reflection lists both services', async () => {
    const { loadSync } = await import('@grpc/proto-loader');
    const { loadPackageDefinition } = await import('@grpc/grpc-js');
    const { protoPath } = await import('grpc-health-check');
    type Ctor = new (address: string, creds: ReturnType<typeof credentials.createInsecure>) => object & { close(): void };
    const health = loadPackageDefinition(loadSync(protoPath, { enums: String })) as unknown as {
      grpc: { health: { v1: { Health: Ctor } } };
    };
    const client = new health.grpc.health.v1.Health(server.address, credentials.createInsecure());
    const reply = await call<object, { status: string }>(
      client,
      'Check',
      { service: 'switchyard.workflow.v1.CoreService' },
      new Metadata(),
    );
    assert.equal(reply.status, 'SERVING');
    client.close();
    const reflectionProto = join(
      import.meta.dirname,
      '..',
      'node_modules',
      '@grpc',
      'reflection',
      'build',
      'proto',
      'grpc',
      'reflection',
      'v1',
      'reflection.proto',
    );
    const reflection = loadPackageDefinition(loadSync(reflectionProto, { keepCase: true })) as unknown as {
      grpc: { reflection: { v1: { ServerReflection: Ctor } } };
    };
    const r = new reflection.grpc.reflection.v1.ServerReflection(server.address, credentials.createInsecure()) as unknown as {
      ServerReflectionInfo(): import('node:stream').Duplex;
      close(): void;
    };
    const services = await new Promise<string[]>((resolve, reject) => {
      const stream = r.ServerReflectionInfo();
      stream.on('data', (message: { list_services_response?: { service: { name: string }[] } }) => {
        resolve((message.list_services_response?.service ?? []).map((x) => x.name));
        stream.end();
      });
      stream.on('error', reject);
      stream.write({ list_services: '' });
    });
    r.close();
    assert.ok(
      services.includes('switchyard.workflow.v1.CoreService') && services.includes('switchyard.workflow.v1.AgentService'),
      services.join(','),
    );
  });
});
