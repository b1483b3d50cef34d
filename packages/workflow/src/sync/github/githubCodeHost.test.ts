import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, test } from 'node:test';
import { fakeGitHub, fakeGitHubOAuth } from '@switchyard/test-support/integrations';
import { tempRepo } from '../../../test/gitFixture.js';
import { makeWorkflow } from '../../../test/helpers.js';
import { type AgentTask, MockAgentAdapter } from '../../agents/agentAdapter.js';
import { AgentDispatcher } from '../../agents/agentDispatcher.js';
import { HeuristicReviewer, type Reviewer } from '../../agents/reviewers.js';
import { WorkflowError } from '../../errors.js';
import { GitRepository } from '../../git/gitRepository.js';
import { SyncEngine } from '../syncEngine.js';
import { deviceFlowLogin } from './githubAuth.js';
import { GitHubCodeHostAdapter, type GitHubCodeHostOptions } from './githubCodeHost.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const APP = { appId: 4242, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), installationId: 77 };
const gh = await fakeGitHub({ owner: 'acme', repo: 'shop', tokens: ['ghp_personal'], app: APP });
after(() => gh.close());
const dir = await mkdtemp(join(tmpdir(), 'github-auth-'));
after(() => rm(dir, { recursive: true, force: true }));

afterEach(() => {
  // Every request the adapter sent and every answer the fake gave conform to GitHub's OpenAPI description.
  assert.deepEqual(gh.violations.splice(0), []);
});

const adapter = (auth: GitHubCodeHostOptions['auth'], extra: Partial<GitHubCodeHostOptions> = {}) =>
  new GitHubCodeHostAdapter({
    baseUrl: gh.url,
    owner: 'acme',
    repo: 'shop',
    auth,
    allowPrivateHosts: ['127.0.0.1'],
    retryBaseDelayMs: 1,
    ...extra,
  });

test('personal token: issues, comments, pull requests and a pinned merge, each checked against the OpenAPI description', async () => {
  const host = adapter({ type: 'token', token: 'ghp_personal' });
  const issue = await host.createIssue({ title: 'Login', description: 'Passkeys', state: 'open' });
  assert.deepEqual(issue, {
    id: issue.id,
    title: 'Login',
    description: 'Passkeys',
    state: 'open',
    url: `https://github.example/acme/shop/issues/${issue.id}`,
  });
  const closed = await host.updateIssue(issue.id, { title: 'Login v2', description: 'Passkeys', state: 'closed' });
  assert.equal(closed.state, 'closed');
  assert.deepEqual(await host.getIssue(issue.id), closed);
  const comment = await host.commentOnIssue(issue.id, 'Refused: CI is red');
  assert.match(comment.url, /#c\d+$/);
  const pr = await host.createPullRequest({ title: 'WP1', head: 'feature/001-login', base: 'main', body: 'Work package 1' });
  const fetched = await host.getPullRequest(pr.number);
  assert.deepEqual([fetched.state, fetched.merged], ['open', false]);
  await assert.rejects(
    host.mergePullRequest(pr.number, { sha: 'not-the-checked-head' }),
    (e: unknown) => e instanceof WorkflowError && e.details?.status === 409,
  );
  assert.deepEqual(await host.mergePullRequest(pr.number, { sha: fetched.head_sha }), { merged: true, sha: `${fetched.head_sha}-merged` });
  assert.equal((await host.getPullRequest(pr.number)).merged, true);
  await assert.rejects(host.getIssue('999'), (e: unknown) => {
    assert.ok(e instanceof WorkflowError && e.code === 'not_found');
    assert.match(e.message, /^GitHub get issue: not found: no issue #999, or the repository acme\/shop does not exist at /);
    return true;
  });
  await assert.rejects(adapter({ type: 'token', token: 'ghp_wrong' }).getIssue(issue.id), (e: unknown) => {
    assert.ok(e instanceof WorkflowError && e.details?.status === 401);
    assert.ok(!e.message.includes('ghp_wrong'), 'the token never appears in an error');
    return true;
  });
});

test('a 404 names the repository the code host is configured for, and for CI the commit it lacks', async () => {
  const elsewhere = adapter({ type: 'token', token: 'ghp_personal' }, { repo: 'not-shop' });
  await assert.rejects(elsewhere.createIssue({ title: 'Login', description: '', state: 'open' }), (e: unknown) => {
    assert.ok(e instanceof WorkflowError && e.code === 'not_found');
    assert.match(
      e.message,
      /^GitHub create issue: not found: the repository acme\/not-shop does not exist at http:\/\/127\.0\.0\.1:\d+ or these credentials cannot see it \(check the code host's owner, repo and token\)$/,
    );
    assert.equal(e.details?.repository, 'acme/not-shop');
    return true;
  });
  // A host that stands on a bare repository reports CI only for commits pushed there, as GitHub does.
  const bare = join(dir, 'hosted.git');
  execFileSync('git', ['init', '--quiet', '--bare', bare]);
  const hosted = await fakeGitHub({ owner: 'acme', repo: 'shop', tokens: ['ghp_personal'], repository: bare });
  try {
    const host = adapter({ type: 'token', token: 'ghp_personal' }, { baseUrl: hosted.url });
    await assert.rejects(host.ciStatus('abc123'), (e: unknown) => {
      assert.ok(e instanceof WorkflowError && e.code === 'not_found');
      assert.match(
        e.message,
        /^GitHub read CI: not found: acme\/shop has no commit abc123 \(GitHub runs CI only on what was pushed to it: push the branch to the remote that is this repository\), or the repository/,
      );
      return true;
    });
    assert.deepEqual(hosted.violations, []);
  } finally {
    await hosted.close();
  }
});

test('CI reads both check runs and commit statuses: a red check run is red even when every status is green', async () => {
  const host = adapter({ type: 'token', token: 'ghp_personal' });
  gh.checkRuns.set('aaa111', [{ name: 'test', status: 'completed', conclusion: 'failure', html_url: 'https://github.example/runs/1' }]);
  gh.statuses.set('aaa111', [{ context: 'ci/legacy', state: 'success', target_url: 'https://ci.example/1' }]);
  assert.deepEqual(await host.ciStatus('aaa111'), {
    state: 'failure',
    url: 'https://github.example/runs/1',
    checks: [
      { context: 'test', state: 'failure' },
      { context: 'ci/legacy', state: 'success' },
    ],
  });
  gh.checkRuns.set('bbb222', [{ name: 'build', status: 'in_progress', conclusion: null, html_url: null }]);
  assert.equal((await host.ciStatus('bbb222')).state, 'pending', 'an Actions-only repository is not "no CI"');
  gh.checkRuns.set('ccc333', [{ name: 'lint', status: 'completed', conclusion: 'skipped', html_url: null }]);
  gh.statuses.set('ccc333', [{ context: 'ci/test', state: 'success', target_url: null }]);
  assert.equal((await host.ciStatus('ccc333')).state, 'success');
  assert.equal((await host.ciStatus('ddd444')).state, 'none');
  await assert.rejects(host.ciStatus('../../etc'), { code: 'invalid_argument' });
  gh.checkRuns.clear();
  gh.statuses.clear();
});

test('a red check run blocks review: the wp-ci-before-review gate refuses, the reviewer never approves', async () => {
  const repo = await tempRepo();
  try {
    const { workflow } = makeWorkflow();
    await workflow.createFeature({ slug: '001-login', title: 'Login', description: 'Passkeys.', actor: 'alice' });
    await workflow.createWorkPackage('001-login', { title: 'Login form', actor: 'alice' });
    gh.checkRuns.set('*', [
      { name: 'Actions / test', status: 'completed', conclusion: 'failure', html_url: 'https://github.example/runs/9' },
    ]);
    const agent = new MockAgentAdapter(async (task: AgentTask) => {
      await writeFile(join(task.worktree, 'login.ts'), `export const attempt = ${task.attempt};\n`);
      await writeFile(join(task.worktree, 'login.test.ts'), '// covered\n');
      execFileSync('git', ['add', '-A'], { cwd: task.worktree });
      execFileSync('git', ['commit', '-q', '-m', `attempt ${task.attempt}`], { cwd: task.worktree });
      return { exit_code: 0, output: 'done\n' };
    });
    const reviews: string[] = [];
    const reviewer: Reviewer = {
      review: async (input) => {
        reviews.push(input.featureSlug);
        return new HeuristicReviewer().review(input);
      },
    };
    const dispatcher = new AgentDispatcher({
      workflow,
      git: new GitRepository(repo.root),
      reviewer,
      ciSource: adapter({ type: 'token', token: 'ghp_personal' }),
      adapters: [agent],
    });
    const job = await dispatcher.dispatch('001-login', 1, { review_cycles: 2 });
    const done = await dispatcher.wait(job.id);
    assert.notEqual(done.outcome, 'approved');
    assert.equal((await workflow.getWorkPackage('001-login', 1)).state, 'BLOCKED');
    assert.deepEqual(reviews, [], 'the gate stopped the package before any reviewer saw it');
    const evidence = await workflow.records.listEvidence('001-login', 1);
    assert.ok(evidence.some((e) => e.type === 'ci_output' && e.passed === false && e.reference === 'https://github.example/runs/9'));
    const trail = (await workflow.audit.entries('001-login')).filter((e) => e.action === 'transition').map((e) => e.transition);
    assert.ok(!trail.includes('DOING -> REVIEW') && !trail.includes('REVIEW -> DONE'), trail.join(', '));
  } finally {
    gh.checkRuns.clear();
    await repo.cleanup();
  }
});

test('OAuth app: the device flow against a local authorization server stores the user token 0600, and the adapter uses it', async () => {
  const oauth = await fakeGitHubOAuth({ clientId: 'Iv1.client', onToken: (token) => gh.tokens.add(token) });
  try {
    oauth.approveAfterPolls = 2;
    const shown: string[] = [];
    const tokenFile = join(dir, 'github-token.json');
    const result = await deviceFlowLogin({
      clientId: 'Iv1.client',
      tokenFile,
      webUrl: oauth.url,
      scopes: ['repo'],
      allowPrivateHosts: ['127.0.0.1'],
      onVerification: (v) => shown.push(`${v.verification_uri} ${v.user_code}`),
    });
    assert.deepEqual(shown, ['https://github.com/login/device WDJB-MJHT']);
    assert.equal(oauth.polls, 3, 'two pending answers, then the token');
    assert.deepEqual(result.scopes, ['repo']);
    assert.equal((await stat(tokenFile)).mode & 0o777, 0o600);
    assert.deepEqual(
      (await readdir(dir)).filter((f) => f.includes('.tmp')),
      [],
      'written atomically: no temp file left',
    );
    const stored = JSON.parse(await readFile(tokenFile, 'utf8')) as { token: string; client_id: string };
    assert.deepEqual([stored.token, stored.client_id], ['gho_device_1', 'Iv1.client']);
    assert.deepEqual(oauth.violations, []);
    const host = adapter({ type: 'oauth_device', clientId: 'Iv1.client', tokenFile });
    const issue = await host.createIssue({ title: 'Created as the user', description: '', state: 'open' });
    assert.equal(
      gh.issues.get(Number(issue.id))?.title,
      'Created as the user',
      'a user token can create issues (Basic client-id auth could not)',
    );
    await assert.rejects(adapter({ type: 'oauth_device', clientId: 'other', tokenFile }).getIssue(issue.id), /another OAuth app/);
    await assert.rejects(
      adapter({ type: 'oauth_device', clientId: 'Iv1.client', tokenFile: join(dir, 'missing.json') }).getIssue('1'),
      /yard code-host login/,
    );
  } finally {
    await oauth.close();
  }
});

test('GitHub App: a signed JWT is exchanged for an installation token, which is reused', async () => {
  const host = adapter({
    type: 'app',
    appId: APP.appId,
    privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    installationId: 77,
  });
  const issue = await host.createIssue({ title: 'From the app', description: 'x', state: 'open' });
  await host.getIssue(issue.id);
  assert.equal(gh.installationTokensIssued, 1);
  assert.deepEqual(gh.calls.slice(-3), ['apps/create-installation-access-token', 'issues/create', 'issues/get']);
  const { privateKey: otherKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const forged = adapter({
    type: 'app',
    appId: APP.appId,
    privateKey: otherKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    installationId: 77,
  });
  await assert.rejects(forged.getIssue(issue.id), WorkflowError, 'a JWT signed with another key is refused');
});

test('rate limits and transient failures go through the throttling and retry plugins', async () => {
  const host = adapter({ type: 'token', token: 'ghp_personal' });
  const reset = String(Math.floor(Date.now() / 1000) - 1);
  gh.failNext.set('issues/create', [
    {
      status: 403,
      body: { message: 'API rate limit exceeded', documentation_url: 'https://docs.github.com/rest/rate-limit' },
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset },
    },
  ]);
  const issue = await host.createIssue({ title: 'After the limit', description: '', state: 'open' });
  assert.equal(gh.issues.get(Number(issue.id))?.title, 'After the limit');
  gh.failNext.set('issues/update', [
    { status: 503, body: { code: 'unavailable', message: 'Service unavailable', documentation_url: 'https://docs.github.com' } },
  ]);
  assert.equal((await host.updateIssue(issue.id, { title: 'Retried', description: '', state: 'open' })).title, 'Retried');
  assert.deepEqual(gh.calls.slice(-4), ['issues/create', 'issues/create', 'issues/update', 'issues/update']);
});

test('SSRF guard: a base URL on a private or loopback address is refused unless the operator allows the host', async () => {
  assert.throws(
    () => new GitHubCodeHostAdapter({ baseUrl: 'http://169.254.169.254/', owner: 'a', repo: 'b', auth: { type: 'token', token: 't' } }),
    {
      code: 'invalid_argument',
    },
  );
  const unallowed = new GitHubCodeHostAdapter({
    baseUrl: gh.url.replace('127.0.0.1', 'localhost'),
    owner: 'acme',
    repo: 'shop',
    auth: { type: 'token', token: 'ghp_personal' },
    retries: 0,
  });
  await assert.rejects(
    unallowed.getIssue('1'),
    (e: unknown) => e instanceof WorkflowError && e.code === 'forbidden' && /loopback/.test(e.message),
  );
  assert.throws(() => new GitHubCodeHostAdapter({ owner: 'acme/../x', repo: 'shop', auth: { type: 'token', token: 't' } }), WorkflowError);
});

test('sync pushes a feature to a GitHub issue and keeps no token in the link', async () => {
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: '002-cart', title: 'Cart', description: 'Checkout', actor: 'alice' });
  const engine = new SyncEngine({ workflow, codeHost: adapter({ type: 'token', token: 'ghp_personal' }) });
  const created = await engine.push('002-cart', 'code_host');
  assert.equal(created.status, 'created');
  await workflow.updateFeature('002-cart', { description: 'Checkout v2', actor: 'alice' });
  assert.equal((await engine.push('002-cart', 'code_host')).status, 'pushed');
  assert.equal(gh.issues.get(Number(created.remote_id))?.body, 'Checkout v2');
  assert.ok(!JSON.stringify(await engine.status()).includes('ghp_personal'));
});

test('the fake cannot drift quietly: a request or answer off the OpenAPI description is recorded as a violation', async () => {
  const send = (method: string, path: string, body?: unknown) =>
    fetch(`${gh.url}${path}`, {
      method,
      headers: { authorization: 'token ghp_personal', accept: 'application/vnd.github+json', 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const issue = await adapter({ type: 'token', token: 'ghp_personal' }).createIssue({ title: 'Drift', description: '', state: 'open' });
  await send('PATCH', `/repos/acme/shop/issues/${issue.id}`, { state: 'Done' });
  await send('GET', '/repos/acme/shop/commits/main/check-runs?per_page=many&colour=red');
  await send('POST', '/repos/acme/shop/pulls', { title: 'no head or base' });
  const found = gh.violations.splice(0);
  assert.ok(
    found.some((v) => /issues\/update.*body.*\/state/.test(v)),
    found.join('\n'),
  );
  assert.ok(
    found.some((v) => /query per_page/.test(v)),
    found.join('\n'),
  );
  assert.ok(
    found.some((v) => /unknown query parameter colour/.test(v)),
    found.join('\n'),
  );
  assert.ok(
    found.some((v) => /pulls\/create.*must have required property 'head'/.test(v)),
    found.join('\n'),
  );
});
