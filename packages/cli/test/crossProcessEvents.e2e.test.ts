/**
 * Cross-process agent events: `yard implement` runs a job in one process while `yard serve` runs
 * in another (this test's), over the same SQLite store. `GET /jobs` lists the job, and
 * `StreamAgentEvents` over gRPC streams its events (the agent's output included) to its final
 * status; a second stream resumes after a given event id and gets exactly the events after it.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { credentials } from '@grpc/grpc-js';
import { loadWorkflowProto } from '@switchyard/server-grpc';
import { eventually } from '@switchyard/test-support';
import { type ServingYard, serveInProcess, type TempRepo, tempRepo, yard, yardProcess } from './helpers.js';

const AGENT = fileURLToPath(new URL('./fixtures/waiting-agent.mjs', import.meta.url));
const SLUG = '001-events';
let repo: TempRepo;
let server: ServingYard | undefined;
let http: string;
let core: InstanceType<ReturnType<typeof loadWorkflowProto>['proto']['switchyard']['workflow']['v1']['CoreService']>;

interface EventMsg {
  id: string | number;
  job_id: string;
  kind: string;
  data: { fields?: Record<string, { stringValue?: string; numberValue?: number }> } | null;
}

before(async () => {
  repo = await tempRepo('yard-events-');
  const check = { name: 'module test', kind: 'test', run: [process.execPath, '--test', 'test/'] };
  await mkdir(join(repo.root, '.agileplus'));
  await writeFile(join(repo.root, '.agileplus', 'config.yaml'), `admins: [Test User]\nci:\n  checks:\n    - ${JSON.stringify(check)}\n`);
  assert.equal((await yard(['specify', SLUG, '--title', 'Events', '--description', 'Stream them.'], { cwd: repo.root })).code, 0);
  assert.equal((await yard(['plan', SLUG, '--force', '--wp', 'One module'], { cwd: repo.root })).code, 0);
  server = await serveInProcess(repo.root, ['--http', '0', '--grpc', '0']);
  http = server.http!;
  const { proto } = loadWorkflowProto();
  core = new proto.switchyard.workflow.v1.CoreService(server.grpc!, credentials.createInsecure());
});

after(async () => {
  core?.close();
  await server?.stop();
  await repo?.cleanup();
});

function streamEvents(request: object, onData: (e: EventMsg) => void = () => undefined): Promise<EventMsg[]> {
  return new Promise((resolve, reject) => {
    const out: EventMsg[] = [];
    (core as unknown as Record<string, (r: object) => NodeJS.ReadableStream>).StreamAgentEvents!(request)
      .on('data', (x: EventMsg) => {
        out.push(x);
        onData(x);
      })
      .on('end', () => resolve(out))
      .on('error', reject);
  });
}

const field = (e: EventMsg, name: string) => e.data?.fields?.[name]?.stringValue;

test('a job run by yard implement in another process is listed by GET /jobs and streamed over gRPC, with resume by event id', async () => {
  const go = join(repo.root, '.agileplus', 'agent.go');
  const implement = yardProcess(['implement', SLUG, '--agent-command', process.execPath, '--agent-arg', AGENT], {
    cwd: repo.root,
    env: { AGENT_GO_FILE: go },
  });
  let jobId = '';
  await eventually(
    'the other process to start its job',
    async () => {
      const jobs = (await (await fetch(`${http}/jobs?feature_slug=${SLUG}`)).json()) as { jobs: { id: string; state: string }[] };
      jobId = jobs.jobs.find((j) => j.state === 'Running')?.id ?? '';
      return jobId !== '';
    },
    60_000,
  );
  let received = 0;
  const live = streamEvents({ job_id: jobId }, () => received++);
  // Let the agent finish only once the stream replayed what was stored: the rest arrives live, from the other process.
  await eventually('the stream to replay the stored events', () => received > 0, 30_000);
  await writeFile(go, '');
  const events = await live;
  const done = await implement;
  assert.equal(done.code, 0, done.stderr);

  assert.ok(events.every((e) => e.job_id === jobId));
  const ids = events.map((e) => Number(e.id));
  assert.ok(
    ids.every((id, i) => id > 0 && (i === 0 || id > ids[i - 1]!)),
    `ids ascend: ${ids.join(',')}`,
  );
  const kinds = events.map((e) => e.kind);
  for (const kind of ['status', 'cycle', 'output', 'ci', 'transition', 'review']) assert.ok(kinds.includes(kind), `a ${kind} event`);
  assert.ok(events.some((e) => e.kind === 'output' && /waiting for the go file/.test(JSON.stringify(e.data))));
  const last = events.at(-1)!;
  assert.deepEqual([last.kind, field(last, 'state')], ['status', 'Completed']);

  // Resume after an event in the middle: exactly the rest, ending with the final status.
  const middle = events[Math.floor(events.length / 2)]!;
  const rest = await streamEvents({ job_id: jobId, after_event_id: Number(middle.id) });
  assert.deepEqual(
    rest.map((e) => Number(e.id)),
    ids.filter((id) => id > Number(middle.id)),
  );
});
