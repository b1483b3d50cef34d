/**
 * `yard init` writes `.agileplus/config.yaml` with the repository's own test and lint commands
 * (package.json scripts with the package manager its lockfile names, pytest and ruff, go test
 * and vet, cargo test and clippy) and the person running it as admin; the file loads as yard's
 * config; an existing one is kept, or with --force only its ci section is rewritten.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, test } from 'node:test';
import { loadConfig } from '../src/config.js';
import { type TempRepo, tempRepo, yard } from './helpers.js';

const repos: TempRepo[] = [];
afterEach(async () => {
  for (const repo of repos.splice(0)) await repo.cleanup();
});

async function repoWith(files: Record<string, string>): Promise<TempRepo> {
  const repo = await tempRepo();
  repos.push(repo);
  for (const [name, content] of Object.entries(files)) await writeFile(join(repo.root, name), content);
  return repo;
}

async function init(repo: TempRepo, ...args: string[]) {
  const r = await yard(['init', ...args, '--output', 'json'], { cwd: repo.root });
  return r;
}

test('a Node repository: its test and lint scripts, run with the package manager its lockfile names', async () => {
  const repo = await repoWith({
    'package.json': JSON.stringify({ scripts: { test: 'node --test', lint: 'biome check .', build: 'tsc' } }),
    'pnpm-lock.yaml': "lockfileVersion: '9.0'\n",
  });
  const r = await init(repo);
  assert.equal(r.code, 0, r.stderr);
  const written = r.json<{ path: string; admins: string[]; checks: { name: string; kind: string; run: string[] }[] }>();
  assert.equal(written.path, join(repo.root, '.agileplus', 'config.yaml'));
  assert.deepEqual(written.admins, ['Test User']);
  assert.deepEqual(written.checks, [
    { name: 'pnpm test', kind: 'test', run: ['pnpm', 'test'] },
    { name: 'pnpm run lint', kind: 'lint', run: ['pnpm', 'run', 'lint'] },
  ]);
  const config = await loadConfig(repo.root, undefined, {});
  assert.deepEqual(config.ci?.checks, written.checks);
  assert.deepEqual(config.admins, ['Test User']);
});

test("npm's placeholder test script is no test; without a lockfile the package manager is npm", async () => {
  const repo = await repoWith({
    'package.json': JSON.stringify({ scripts: { test: 'echo "Error: no test specified" && exit 1', lint: 'eslint .' } }),
  });
  const r = await init(repo);
  assert.deepEqual(
    r.json<{ checks: { run: string[] }[] }>().checks.map((c) => c.run),
    [['npm', 'run', 'lint']],
  );
});

test('Python, Go and Rust repositories: pytest and ruff, go test and vet, cargo test and clippy', async () => {
  const cases: [Record<string, string>, string[][]][] = [
    [
      { 'pyproject.toml': '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n\n[tool.ruff]\nline-length = 100\n' },
      [['pytest'], ['ruff', 'check', '.']],
    ],
    [{ 'setup.cfg': '[tool:pytest]\ntestpaths = tests\n' }, [['pytest']]],
    [
      { 'go.mod': 'module example.com/x\n\ngo 1.22\n' },
      [
        ['go', 'test', './...'],
        ['go', 'vet', './...'],
      ],
    ],
    [
      { 'Cargo.toml': '[package]\nname = "x"\nversion = "0.1.0"\n' },
      [
        ['cargo', 'test'],
        ['cargo', 'clippy', '--', '-D', 'warnings'],
      ],
    ],
    [{}, []],
  ];
  for (const [files, expected] of cases) {
    const repo = await repoWith(files);
    const r = await init(repo);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      r.json<{ checks: { run: string[] }[] }>().checks.map((c) => c.run),
      expected,
      JSON.stringify(files),
    );
  }
});

test('an existing config is kept (exit 5); --force rewrites only its ci section', async () => {
  const repo = await repoWith({ 'go.mod': 'module example.com/x\n' });
  const path = join(repo.root, '.agileplus', 'config.yaml');
  assert.equal((await init(repo)).code, 0);
  await writeFile(path, 'admins: ["lead"]\nrepo_name: shop\nci:\n  checks: []\n');
  const refused = await init(repo);
  assert.equal(refused.code, 5);
  assert.equal(JSON.parse(refused.stderr).error.code, 'already_exists');
  assert.match(await readFile(path, 'utf8'), /checks: \[\]/, 'left as it was');
  const forced = await init(repo, '--force');
  assert.equal(forced.code, 0, forced.stderr);
  const config = await loadConfig(repo.root, undefined, {});
  assert.deepEqual(
    [config.admins, config.repo_name, config.ci?.checks.map((c) => c.name)],
    [['lead'], 'shop', ['go test ./...', 'go vet ./...']],
  );
});

test("a security script is the repository's security scan (kind security, recorded as security_scan evidence)", async () => {
  const repo = await repoWith({
    'package.json': JSON.stringify({ scripts: { test: 'node --test', security: 'node scan.mjs', audit: 'npm audit' } }),
    'yarn.lock': '',
  });
  const r = await init(repo);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.json<{ checks: unknown[] }>().checks, [
    { name: 'yarn test', kind: 'test', run: ['yarn', 'test'] },
    { name: 'yarn run security', kind: 'security', run: ['yarn', 'run', 'security'] },
  ]);
  assert.deepEqual(
    (await loadConfig(repo.root, undefined, {})).ci?.checks.map((c) => c.kind),
    ['test', 'security'],
  );
});
