/**
 * The code host and tracker from yard's config: the config keys choose the
 * GitHub sign-in and the tracker (with clear refusals for incomplete
 * sections), `yard code-host login` runs the device flow against a local
 * authorization server and keeps the token 0600 out of git, and `yard sync`
 * reaches a Linear tracker through @linear/sdk.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fakeGitHubOAuth, fakeLinear } from '@switchyard/test-support/integrations';
import { loadConfig } from '../src/config.js';
import { type TempRepo, tempRepo, yard } from './helpers.js';

let repo: TempRepo;
before(async () => {
  repo = await tempRepo();
});
after(() => repo.cleanup());

const configWith = async (lines: string[]) => {
  const path = join(repo.root, 'integrations.yaml');
  await writeFile(path, lines.join('\n'));
  return path;
};

test('config: the code host sign-in and the tracker kind are chosen by keys; incomplete sections are refused by name', async () => {
  const env = { GITHUB_TOKEN: 'ghp_x', LINEAR_KEY: 'lin_api_x' };
  const ok = await loadConfig(
    repo.root,
    await configWith([
      'code_host: { owner: acme, repo: shop, app_id: 12, installation_id: 34, private_key_file: app.pem }',
      'tracker: { kind: linear, team_id: t-1, auth: api_key, api_key: env:LINEAR_KEY }',
    ]),
    env,
  );
  assert.equal(ok.tracker?.kind, 'linear');
  assert.equal(ok.tracker?.api_key, 'lin_api_x');
  const legacy = await loadConfig(
    repo.root,
    await configWith([
      'tracker: { base_url: "https://t.example/api", token_url: "https://t.example/token", client_id: a, client_secret: b }',
    ]),
    env,
  );
  assert.equal(legacy.tracker?.kind, 'rest', 'a tracker section without a kind is the custom REST adapter, as before');
  const refusals: [string[], RegExp][] = [
    [['code_host: { owner: acme, repo: shop }'], /code_host\.token: auth token needs token/],
    [['code_host: { owner: acme, repo: shop, auth: app, app_id: 1 }'], /code_host\.installation_id: auth app needs installation_id/],
    [['tracker: { kind: linear, client_id: a, client_secret: b }'], /tracker\.team_id: a Linear tracker needs team_id/],
    [
      ['tracker: { kind: plane, workspace: acme, project_id: p, client_id: a, client_secret: b }'],
      /tracker\.app_installation_id: Plane's bot tokens need app_installation_id/,
    ],
    [['tracker: { kind: jira }'], /tracker\.kind/],
  ];
  for (const [lines, message] of refusals) {
    await assert.rejects(loadConfig(repo.root, await configWith(lines), env), message, lines.join(' '));
  }
});

test('yard code-host login: the device flow against a local authorization server; the token is 0600, excluded from git, never printed', async () => {
  const oauth = await fakeGitHubOAuth({ clientId: 'Ov23li-yard' });
  try {
    await writeFile(
      join(repo.root, 'gh.yaml'),
      [
        'code_host:',
        '  owner: acme',
        '  repo: shop',
        '  client_id: Ov23li-yard',
        `  web_url: ${oauth.url}`,
        '  allow_private_hosts: ["127.0.0.1"]',
      ].join('\n'),
    );
    const r = await yard(['code-host', 'login', '--config', 'gh.yaml', '--output', 'json'], { cwd: repo.root });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Open https:\/\/github\.com\/login\/device and enter the code WDJB-MJHT/);
    const result = r.json<{ signed_in: boolean; token_file: string; scopes: string[] }>();
    assert.deepEqual([result.signed_in, result.scopes], [true, ['repo']]);
    assert.equal(result.token_file, join(repo.root, '.agileplus', 'github-token.json'));
    assert.equal((await stat(result.token_file)).mode & 0o777, 0o600);
    assert.ok(!`${r.stdout}${r.stderr}`.includes(oauth.issued[0]!), 'the token is never printed');
    const status = execFileSync('git', ['status', '--porcelain', '--ignored=no'], { cwd: repo.root, encoding: 'utf8' });
    assert.doesNotMatch(status, /github-token/);
    assert.deepEqual(oauth.violations, []);
    const without = await yard(['code-host', 'login'], { cwd: repo.root });
    assert.equal(without.code, 2);
    assert.match(without.stderr, /set code_host\.client_id/);
  } finally {
    await oauth.close();
  }
});

test('yard sync push reaches Linear through @linear/sdk, and --help names the config keys', async () => {
  const linear = await fakeLinear({ authorizations: ['lin_api_yard'] });
  try {
    await writeFile(
      join(repo.root, 'linear.yaml'),
      [
        'tracker:',
        '  kind: linear',
        `  api_url: ${linear.url}`,
        `  team_id: ${linear.teamId}`,
        '  auth: api_key',
        '  api_key: env:LINEAR_API_KEY',
        '  allow_private_hosts: ["127.0.0.1"]',
      ].join('\n'),
    );
    const env = { LINEAR_API_KEY: 'lin_api_yard' };
    assert.equal((await yard(['specify', '001-login', '--title', 'Login', '--config', 'linear.yaml'], { cwd: repo.root, env })).code, 0);
    const pushed = await yard(['sync', 'push', '001-login', '--config', 'linear.yaml', '--output', 'json'], { cwd: repo.root, env });
    assert.equal(pushed.code, 0, pushed.stderr);
    const issue = [...linear.issues.values()][0]!;
    assert.equal(issue.title, 'Login');
    assert.equal(linear.states.find((s) => s.id === issue.state.id)!.name, 'Todo');
    assert.deepEqual(linear.violations, []);
    const help = await yard(['sync', '--help'], { cwd: repo.root });
    assert.match(help.stdout, /kind: linear \| plane \| rest/);
    const hostHelp = await yard(['code-host', '--help'], { cwd: repo.root });
    assert.match(hostHelp.stdout, /auth: token \| oauth_device \| app/);
  } finally {
    await linear.close();
  }
});
