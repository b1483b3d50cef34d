/**
 * The visible commands end to end: the lifecycle from specify to
 * retrospective with its gates and exit codes, work packages and evidence,
 * implement with a real agent process and the review loop, jobs (including
 * a cancel from another process), triage and the queue, sync against a
 * local fake tracker, and the dispatch tool.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startFakeTracker } from './fakeTracker.js';
import { auditLines, CHILD_NODE_OPTIONS, type TempRepo, tempRepo, yard, yardJson, yardProcess } from './helpers.js';

// Agents are plain JavaScript: they start without tsx when yard runs built.
process.env.NODE_OPTIONS = CHILD_NODE_OPTIONS;

const AGENT = fileURLToPath(new URL('./agent.mjs', import.meta.url));
const SLUG = '001-login';
let repo: TempRepo;
let tracker: Awaited<ReturnType<typeof startFakeTracker>>;
const run = (...args: string[]) => yard(args, { cwd: repo.root });
const json = yardJson(() => repo.root);

before(async () => {
  repo = await tempRepo();
  tracker = await startFakeTracker();
  await writeFile(
    join(repo.root, 'yard.yaml'),
    [
      'admins: ["Test User"]',
      'tracker:',
      `  base_url: ${tracker.url}`,
      `  token_url: ${tracker.url}/oauth/token`,
      '  client_id: yard',
      '  client_secret: env:TRACKER_SECRET',
      '  allow_private_hosts: ["127.0.0.1"]',
    ].join('\n'),
  );
});
after(async () => {
  await tracker.close();
  await repo.cleanup();
});

describe('yard commands', { concurrency: 1 }, () => {
  test('the lifecycle: specify creates and versions the spec; each command moves one step; gates and refusals have their exit codes', async () => {
    const specified = await json<{ created: boolean; feature: { state: string }; spec: { version: number } }>(
      'specify',
      SLUG,
      '--title',
      'Log in with passkeys',
      '--description',
      'Passkeys instead of passwords.',
    );
    assert.deepEqual([specified.created, specified.feature.state, specified.spec.version], [true, 'SPECIFIED', 1]);
    const again = await run('specify', SLUG, '--output', 'json');
    assert.equal(again.code, 5, 'nothing to update and no step to take: a conflict');
    assert.equal(JSON.parse(again.stderr).error.code, 'invalid_transition');
    const respecified = await json<{ spec: { version: number }; transition: null }>(
      'specify',
      SLUG,
      '--description',
      'Passkeys, with a password fallback.',
    );
    assert.deepEqual([respecified.spec.version, respecified.transition], [2, null]);
    const skipped = await run('validate', SLUG, '--output', 'json');
    assert.equal(skipped.code, 5, 'skipping steps needs --force');
    const researched = await json<{ from: string; to: string; entry: { id: number } }>('research', SLUG);
    assert.deepEqual([researched.from, researched.to], ['SPECIFIED', 'RESEARCHED']);
    const planned = await json<{ work_packages_added: { sequence: number }[] }>('plan', SLUG, '--wp', 'Login form', '--wp', 'Session API');
    assert.deepEqual(
      planned.work_packages_added.map((w) => w.sequence),
      [1, 2],
    );
    const added = await json<{ sequence: number; depends_on: number[] }>(
      'wp',
      'add',
      SLUG,
      '--title',
      'Docs',
      '--depends-on',
      '1,2',
      '--file-scope',
      'docs/',
    );
    assert.deepEqual([added.sequence, added.depends_on], [3, [1, 2]]);
    const listed = await json<{ sequence: number; wave: number }[]>('wp', 'list', SLUG);
    assert.deepEqual(
      listed.map((w) => [w.sequence, w.wave]),
      [
        [1, 1],
        [2, 1],
        [3, 2],
      ],
    );
    const table = await run('feature', 'list');
    assert.match(table.stdout, /^SLUG\s+STATE\s+TITLE/m);
    assert.match(table.stdout, /001-login\s+PLANNED\s+Log in with passkeys/);
    const markdown = await run('feature', 'list', '--output', 'markdown');
    assert.match(markdown.stdout, /^\| slug \| state \| title \|/m);
  });

  test('work packages: a gate refuses with its violations (exit 4) until evidence is attached', async () => {
    await json('wp', 'move', SLUG, '3', 'DOING').catch(() => undefined);
    const waiting = await run('wp', 'move', SLUG, '3', 'DOING', '--output', 'json');
    assert.equal(waiting.code, 5, 'prerequisites are not DONE');
    await json('wp', 'move', SLUG, '2', 'DOING');
    const refused = await run('wp', 'move', SLUG, '2', 'REVIEW', '--output', 'json');
    assert.equal(refused.code, 4);
    const body = JSON.parse(refused.stderr) as { error: { code: string; details: { violations: { rule_id: string }[] } } };
    assert.equal(body.error.code, 'gate_failed');
    assert.deepEqual(
      body.error.details.violations.map((v) => v.rule_id),
      ['wp-ci-before-review'],
    );
    const human = await run('wp', 'move', SLUG, '2', 'REVIEW');
    assert.match(human.stderr, /wp-ci-before-review: .*\n\s+fix: /);
    const evidence = await json<{ id: number }>('evidence', SLUG, '--wp', '2', '--type', 'ci_output', '--reference', 'ci#7', '--passed');
    const moved = await json<{ to: string; entry: { evidence_refs: number[] } }>('wp', 'move', SLUG, '2', 'REVIEW');
    assert.deepEqual([moved.to, moved.entry.evidence_refs], ['REVIEW', [evidence.id]]);
    await json('evidence', SLUG, '--wp', '2', '--type', 'review_approval', '--reference', 'bob', '--passed');
    await json('wp', 'move', SLUG, '2', 'DONE');
  });

  test('implement runs the agent in the package worktree through the review loop, with progress, and the package ends DONE', async () => {
    // No CI in this repository: an admin turns the CI gate off for this feature, as a team without CI would.
    await json(
      'governance:enforce',
      '--feature-slug',
      SLUG,
      '--rule',
      'wp-ci-before-review',
      '--action',
      'disable',
      '--config',
      'yard.yaml',
    );
    const r = await yard(
      [
        'implement',
        SLUG,
        '--wp',
        '1',
        '--agent-command',
        process.execPath,
        '--agent-arg',
        AGENT,
        '--max-review-cycles',
        '2',
        '--config',
        'yard.yaml',
      ],
      {
        cwd: repo.root,
      },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /001-login: PLANNED -> IMPLEMENTING/);
    assert.match(r.stderr, /\[001-login wp1\] review cycle 1\/2: agent running/);
    assert.match(r.stderr, /\[001-login wp1\] REVIEW -> DONE/);
    assert.match(r.stdout, /^WP_SEQUENCE\s+JOB_ID\s+STATE/m);
    assert.match(r.stdout, /Completed\s+approved/);
    const wp = (await json<{ sequence: number; state: string; pr_url: string | null; agent_id: string }[]>('wp', 'list', SLUG)).find(
      (w) => w.sequence === 1,
    )!;
    assert.deepEqual([wp.state, wp.pr_url], ['DONE', 'https://example.invalid/pr/1']);
    const jobs = await json<{ id: string; state: string; outcome: string }[]>('jobs', 'list', '--feature', SLUG);
    assert.equal(jobs.length, 1);
    assert.deepEqual([jobs[0]!.id, jobs[0]!.state, jobs[0]!.outcome], [wp.agent_id, 'Completed', 'approved']);
    const shown = await json<{ result: { commits: string[] } }>('jobs', 'show', jobs[0]!.id);
    assert.equal(shown.result.commits.length, 1);
    const cancelDone = await run('jobs', 'cancel', jobs[0]!.id);
    assert.match(cancelDone.stdout, /already ended: Completed/);
    assert.equal((await run('jobs', 'show', '00000000-0000-4000-8000-000000000000')).code, 3);
  });

  test('yard jobs cancel from another process stops a running job', async () => {
    const running = yardProcess(
      ['implement', SLUG, '--wp', '3', '--agent-command', process.execPath, '--agent-arg', AGENT, '--config', 'yard.yaml'],
      {
        cwd: repo.root,
        env: { AGENT_SLEEP_MS: '60000' },
      },
    );
    let jobId: string | undefined;
    for (let i = 0; i < 300 && !jobId; i++) {
      jobId = (await json<{ id: string }[]>('jobs', 'list', '--state', 'Running'))[0]?.id;
      if (!jobId) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.ok(jobId, 'the job started');
    const cancelled = await json<{ state: string }>('jobs', 'cancel', jobId!);
    assert.equal(cancelled.state, 'Cancelled');
    const result = await running;
    assert.equal(result.code, 1, 'implement reports the job did not complete');
    assert.match(result.stdout, /Cancelled/);
    assert.equal((await json<{ state: string }>('jobs', 'show', jobId!)).state, 'Cancelled');
  });

  test('validate and ship pass only with their evidence; retrospective ends the lifecycle', async () => {
    await json('governance:enforce', '--feature-slug', SLUG, '--rule', 'wp-ci-before-review', '--action', 'reset', '--config', 'yard.yaml');
    const open = await run('validate', SLUG, '--output', 'json');
    assert.equal(open.code, 4, 'package 3 is not DONE and there is no test evidence');
    const rules = (JSON.parse(open.stderr) as { error: { details: { violations: { rule_id: string }[] } } }).error.details.violations.map(
      (v) => v.rule_id,
    );
    assert.deepEqual(rules.sort(), ['feature-tests-before-validated', 'feature-work-packages-done']);
    await json('evidence', SLUG, '--type', 'ci_output', '--reference', 'ci#9', '--passed', '--wp', '3');
    // The cancelled job had moved package 3 to DOING.
    assert.equal((await json<{ sequence: number; state: string }[]>('wp', 'list', SLUG)).find((w) => w.sequence === 3)!.state, 'DOING');
    await json('wp', 'move', SLUG, '3', 'REVIEW');
    await json('evidence', SLUG, '--wp', '3', '--type', 'review_approval', '--reference', 'bob', '--passed');
    await json('wp', 'move', SLUG, '3', 'DONE');
    await json('evidence', SLUG, '--type', 'test_result', '--reference', 'tests#1', '--passed');
    assert.equal((await json<{ to: string }>('validate', SLUG)).to, 'VALIDATED');
    assert.equal((await run('ship', SLUG)).code, 4);
    await json('evidence', SLUG, '--type', 'security_scan', '--reference', 'scan#1', '--passed');
    assert.equal((await json<{ to: string }>('ship', SLUG)).to, 'SHIPPED');
    assert.equal((await json<{ to: string }>('retrospective', SLUG)).to, 'RETROSPECTED');
    const show = await json<{ feature: { state: string }; next_gate: null }>('feature', 'show', SLUG);
    assert.deepEqual([show.feature.state, show.next_gate], ['RETROSPECTED', null]);
    assert.equal((await run('feature', 'show', 'nope')).code, 3);
  });

  test('triage classifies and queues; the queue pops by priority, then age', async () => {
    const dry = await json<{ classification: { type: string; priority: number }; item: null }>(
      'triage',
      'Login',
      'crashes',
      'in',
      'production',
      '--dry-run',
    );
    assert.equal(dry.classification.type, 'bug');
    assert.equal(dry.item, null);
    assert.deepEqual(await json('queue', 'list'), []);
    const bug = await json<{ item: { id: number; priority: number } }>('triage', 'Login crashes in production on Safari');
    const idea = await json<{ item: { id: number; type: string; source: string } }>(
      'triage',
      'Maybe a dark mode someday',
      '--type',
      'idea',
    );
    assert.deepEqual([idea.item.type, idea.item.source], ['idea', 'manual']);
    const task = await json<{ id: number; priority: number }>(
      'queue',
      'add',
      'Rotate the signing key',
      '--type',
      'task',
      '--priority',
      '100',
    );
    assert.deepEqual(
      (await json<{ id: number }[]>('queue', 'list', '--status', 'open')).map((i) => i.id),
      [task.id, bug.item.id, idea.item.id],
    );
    assert.equal((await json<{ title: string }>('queue', 'show', String(bug.item.id))).title, 'Login crashes in production on Safari');
    assert.equal((await json<{ id: number; status: string }>('queue', 'pop')).id, task.id);
    assert.equal((await json<{ id: number }>('queue', 'pop')).id, bug.item.id);
    await json('queue', 'pop');
    const empty = await run('queue', 'pop', '--output', 'json');
    assert.deepEqual([empty.code, empty.stdout], [3, ''], 'an empty queue: exit 3 (test/jsonMode.test.ts has the rest)');
    const bad = await run('queue', 'add', 'x', '--type', 'task', '--priority', '101', '--output', 'json');
    assert.equal(bad.code, 2);
    assert.match(JSON.parse(bad.stderr).error.message, /--priority/);
  });

  test('sync pushes to the tracker, shows links, and pulls remote edits', async () => {
    const env = { TRACKER_SECRET: 'tracker-secret' };
    const y = (...args: string[]) => yard([...args, '--config', 'yard.yaml', '--output', 'json'], { cwd: repo.root, env });
    const pushed = await y('sync', 'push', SLUG);
    assert.equal(pushed.code, 0, pushed.stderr);
    assert.equal(pushed.json<{ status: string }>().status, 'created');
    const issue = [...tracker.issues.values()][0]!;
    assert.deepEqual([issue.title, issue.state], ['Log in with passkeys', 'Done']);
    assert.equal((await y('sync', 'push', SLUG)).json<{ status: string }>().status, 'in_sync');
    const status = await y('sync', 'status');
    assert.deepEqual(
      status.json<{ local_key: string; remote_id: string }[]>().map((l) => [l.local_key, l.remote_id]),
      [[`feature:${SLUG}`, issue.id]],
    );
    issue.title = 'Log in with passkeys (and a fallback)';
    assert.equal((await y('sync', 'pull', SLUG)).json<{ status: string }>().status, 'pulled');
    assert.equal(
      (await json<{ title: string }>('feature', 'show', SLUG).then((r) => (r as unknown as { feature: { title: string } }).feature)).title,
      issue.title,
    );
    const missingSecret = await yard(['sync', 'status', '--config', 'yard.yaml', '--output', 'json'], { cwd: repo.root });
    assert.equal(missingSecret.code, 2);
    assert.match(JSON.parse(missingSecret.stderr).error.message, /TRACKER_SECRET is not set/);
    assert.doesNotMatch(missingSecret.stderr, /tracker-secret/);
  });

  test('dispatch: one envelope in, one JSON result out; kebab or snake keys; feature_slug fills the argument; every call audited', async () => {
    const before = (await auditLines(repo.root)).length;
    const envelope = {
      command: 'dispatch_command',
      feature_slug: SLUG,
      args: { command: 'artifact:write', 'relative-path': 'plan.md', content: '# Plan\n' },
    };
    const written = await run('dispatch', JSON.stringify(envelope));
    assert.equal(written.code, 0, written.stderr);
    const result = written.json<{ ok: boolean; command: string; result: { path: string }; audit: { id: number } }>();
    assert.deepEqual([result.ok, result.command, result.result.path], [true, 'artifact:write', `${SLUG}/plan.md`]);
    const viaStdin = await yardProcess(['dispatch'], {
      cwd: repo.root,
      stdin: JSON.stringify({
        command: 'dispatch_command',
        feature_slug: SLUG,
        args: { command: 'artifact:hash', relative_path: 'plan.md' },
      }),
    });
    assert.equal(viaStdin.code, 0, viaStdin.stderr);
    assert.match(viaStdin.json<{ result: { hash: string } }>().result.hash, /^sha256:[0-9a-f]{64}$/);
    const bad = await run('dispatch', '{"command":"dispatch_command","args":{"command":"branch:create"}}', '--output', 'json');
    assert.equal(bad.code, 2);
    assert.equal(bad.json<{ ok: boolean; error: { code: string } }>().error.code, 'invalid_argument');
    const notJson = await run('dispatch', '{nope');
    assert.equal(notJson.code, 2);
    const wrongTool = await run('dispatch', '{"command":"rm_rf","args":{"command":"branch:list"}}');
    assert.equal(wrongTool.code, 2);
    const lines = (await auditLines(repo.root)).slice(before);
    assert.deepEqual(
      lines.map((l) => [l.command, l.exit_code]),
      [
        ['artifact:write', 0],
        ['artifact:hash', 0],
        ['branch:create', 2],
        ['dispatch_command', 2],
        ['branch:list', 2],
      ],
    );
    const schema = await run('dispatch', '--schema');
    const variants = (schema.json<{ properties: { args: { oneOf?: unknown[]; anyOf?: unknown[] } } }>().properties.args.oneOf ??
      schema.json<{ properties: { args: { anyOf: unknown[] } } }>().properties.args.anyOf) as {
      properties: { command: { const: string } };
    }[];
    assert.ok(variants.length > 40);
    assert.ok(variants.some((v) => v.properties.command.const === 'audit:verify'));
  });

  test('usage errors: unknown commands and options exit 2, as JSON on stderr with --output json', async () => {
    const unknown = await run('frobnicate', '--output', 'json');
    assert.equal(unknown.code, 2);
    assert.equal(JSON.parse(unknown.stderr).error.code, 'invalid_argument');
    const option = await run('feature', 'list', '--colour');
    assert.equal(option.code, 2);
    assert.match(option.stderr, /unknown option '--colour'/);
    const output = await run('feature', 'list', '--output', 'yaml');
    assert.equal(output.code, 2);
    const none = await run();
    assert.equal(none.code, 2);
    assert.match(none.stderr, /Usage: yard/);
  });
});
