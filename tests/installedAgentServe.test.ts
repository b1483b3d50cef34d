/**
 * `yard agent serve` after a plain install: the CLI and the workspace packages it needs are packed
 * with `pnpm pack` (as they would be published), installed with npm into a clean temporary directory
 * (the local tarballs, everything else from the npm registry), and `yard agent serve -- bash` must
 * start and answer `/status`. npm runs no install scripts here (`--ignore-scripts`): the terminal
 * module must come prebuilt (`@lydell/node-pty`, an optional dependency), so no compiler is needed.
 *
 * It packs what `pnpm build` made: without a build it skips (fails under CI, which builds first).
 * It takes minutes (npm), so it runs with SWITCHYARD_PACKAGING=1 (`pnpm test:packaging`, its own CI
 * step after the build), not in the main suite.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { eventually, missing } from '@switchyard/test-support';

const run = promisify(execFile);
const packagesDir = fileURLToPath(new URL('../packages/', import.meta.url));

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

/** Workspace package directories by package name. */
const workspace = new Map<string, string>(
  readdirSync(packagesDir)
    .filter((dir) => existsSync(join(packagesDir, dir, 'package.json')))
    .map((dir) => [(JSON.parse(readFileSync(join(packagesDir, dir, 'package.json'), 'utf8')) as Manifest).name, dir]),
);

/** `name` and the workspace packages it needs at run time (dependencies, not devDependencies). */
function runtimeClosure(name: string, seen = new Set<string>()): Set<string> {
  if (seen.has(name)) return seen;
  seen.add(name);
  const manifest = JSON.parse(readFileSync(join(packagesDir, workspace.get(name)!, 'package.json'), 'utf8')) as Manifest;
  for (const dependency of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies }))
    if (workspace.has(dependency)) runtimeClosure(dependency, seen);
  return seen;
}

const enabled = process.env.SWITCHYARD_PACKAGING === '1';
const needed = [...runtimeClosure('@switchyard/cli')];
const unbuilt = needed.filter((name) => !existsSync(join(packagesDir, workspace.get(name)!, 'dist', 'index.js')));
const build = !enabled
  ? { skip: 'the install test runs with SWITCHYARD_PACKAGING=1 (`pnpm test:packaging`)' }
  : unbuilt.length === 0
    ? { skip: false as const }
    : missing<object>(
        `${unbuilt.join(', ')} ${unbuilt.length === 1 ? 'is' : 'are'} not built`,
        'Run `pnpm build` first: the test packs dist/.',
      );

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

test('the packed CLI, installed with npm in a clean directory, runs `yard agent serve -- bash`', {
  skip: build.skip,
  timeout: 600_000,
}, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'installed-yard-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const tarballs = join(dir, 'tarballs');
  const app = join(dir, 'app');
  await mkdir(tarballs);
  await mkdir(app);
  // pnpm pack writes workspace:* as the real versions, as publishing does.
  const packed = new Map<string, string>();
  for (const name of needed) {
    const { stdout } = await run('pnpm', ['pack', '--pack-destination', tarballs], { cwd: join(packagesDir, workspace.get(name)!) });
    const tarball = stdout.trim().split('\n').at(-1)!.trim();
    assert.match(tarball, /\.tgz$/, `pnpm pack names the tarball: ${stdout}`);
    packed.set(name, `file:${tarball}`);
  }
  // The tarballs stand in for the registry's @switchyard packages, wherever in the tree they are asked for.
  await writeFile(
    join(app, 'package.json'),
    JSON.stringify({
      name: 'installed-yard',
      private: true,
      dependencies: { '@switchyard/cli': packed.get('@switchyard/cli') },
      overrides: Object.fromEntries(packed),
    }),
  );
  const npmEnv = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' };
  await run('npm', ['install', '--ignore-scripts', '--prefer-offline', '--no-package-lock'], {
    cwd: app,
    env: npmEnv,
    maxBuffer: 16 * 1024 * 1024,
  });
  assert.ok(existsSync(join(app, 'node_modules', '@lydell', 'node-pty')), 'the prebuilt terminal module came with the CLI');

  const yard = join(app, 'node_modules', '.bin', 'yard');
  let stdout = '';
  let stderr = '';
  const child: ChildProcess = spawn(yard, ['agent', 'serve', '--port', '0', '--output', 'json', '--', 'bash', '--norc', '--noprofile'], {
    cwd: app,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  cleanups.push(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await eventually('yard agent serve to print its URL', () => stdout.includes('"url"') || child.exitCode !== null, 60_000);
  assert.ok(stdout.includes('"url"'), `yard agent serve did not start: ${stderr}`);
  const { url } = JSON.parse(stdout) as { url: string };
  let status: { status?: string; transport?: string } = {};
  await eventually(
    'the agent to be stable',
    async () => {
      status = (await (await fetch(`${url}/status`)).json()) as typeof status;
      return status.status === 'stable';
    },
    30_000,
  );
  assert.equal(status.transport, 'pty');
  child.kill('SIGINT');
  assert.equal(await exited, 0, `yard agent serve ends cleanly on SIGINT: ${stderr}`);
});
