/**
 * @module workspaceProgram
 * How a test starts one of the workspace's programs (`yard`, `switchyard`,
 * `audit-chain`, an example) as a real process: from its TypeScript source
 * through tsx, or from the package's build.
 *
 * The build is used when every package's `dist/` is newer than its sources,
 * as in CI, which builds before it tests. A process then starts in about
 * 0.2 s instead of 0.7 s (tsx's loader thread alone costs about 0.4 s a
 * process, and the suite starts hundreds), and it runs what users run. After
 * an edit the build is older than the sources and the sources are used, so
 * a test never runs stale code. `SWITCHYARD_TEST_CHILDREN=source` (or
 * `built`) forces one; `pnpm test` decides once and passes its choice down.
 */
import { type ExecFileOptions, execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const TSX = import.meta.resolve('tsx');
/** The flags that run TypeScript sources: the workspace's source condition and tsx, by absolute URL so any cwd works. */
export const SOURCE_FLAGS: readonly string[] = ['--conditions=@switchyard/source', `--import=${TSX}`];

/** What starts a program: node's arguments before the program's own, and the environment to lay over the parent's. */
export interface WorkspaceProgram {
  /** `[...flags, entry]`: pass `[...program.args, ...yourArgs]` to `process.execPath`. */
  args: string[];
  /** `NODE_OPTIONS` for the child: the parent's, without the source flags when the child runs the build. */
  env: { NODE_OPTIONS: string };
  /** Which form runs. */
  form: 'source' | 'built';
}

/**
 * The arguments that start `source` (a `.ts` file) as a process: its build
 * (`packages/<name>/src/x.ts` → `packages/<name>/dist/x.js`) when the
 * workspace's build is fresh and has that file, else the source through tsx.
 * A file outside a package's `src/` (an example) keeps its `.ts` but, with a
 * fresh build, imports the packages' builds instead of their sources.
 *
 * @example
 * ```ts
 * const yard = workspaceProgram(new URL('../src/bin.ts', import.meta.url));
 * spawn(process.execPath, [...yard.args, '--help'], { env: { ...process.env, ...yard.env } });
 * ```
 */
export function workspaceProgram(source: string | URL): WorkspaceProgram {
  const path = typeof source === 'string' ? source : fileURLToPath(source);
  const inherited = withoutSourceFlags(process.env.NODE_OPTIONS ?? '');
  if (childrenRunBuilt()) {
    const built = builtFile(path);
    if (built) return { args: [built], env: { NODE_OPTIONS: inherited }, form: 'built' };
    if (!isPackageSource(path)) return { args: [`--import=${TSX}`, path], env: { NODE_OPTIONS: inherited }, form: 'built' };
  }
  return { args: [...SOURCE_FLAGS, path], env: { NODE_OPTIONS: inherited }, form: 'source' };
}

/**
 * Runs a workspace program (see {@link workspaceProgram}) to its end and
 * answers its output; rejects as `execFile` does (with `code`, `stdout` and
 * `stderr`) when it exits non-zero or times out. `options.env` (default the
 * parent's environment) gets the program's `NODE_OPTIONS`.
 *
 * @example
 * ```ts
 * const { stdout } = await runWorkspaceProgram(new URL('./quickstart.ts', import.meta.url), [], { timeout: 60_000 });
 * ```
 */
export function runWorkspaceProgram(
  source: string | URL,
  args: readonly string[] = [],
  options: ExecFileOptions = {},
): Promise<{ stdout: string; stderr: string }> {
  const program = workspaceProgram(source);
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...program.args, ...args],
      { ...options, encoding: 'utf8', env: { ...(options.env ?? process.env), ...program.env } },
      (error, stdout, stderr) => {
        if (error) reject(Object.assign(error, { stdout, stderr }));
        else resolve({ stdout, stderr });
      },
    );
  });
}

/** Whether children run the build: `SWITCHYARD_TEST_CHILDREN` when set, else whether the build is fresh (checked once). */
export function childrenRunBuilt(): boolean {
  const forced = process.env.SWITCHYARD_TEST_CHILDREN;
  if (forced === 'built' || forced === 'source') return forced === 'built';
  fresh ??= buildIsFresh(ROOT);
  return fresh;
}
let fresh: boolean | undefined;

/**
 * Whether every built package's `dist/` is newer than every file it is
 * built from (its `src/` apart from tests, `package.json`, `tsup.config.ts`).
 * A missing `dist/` is not fresh.
 */
export function buildIsFresh(root: string): boolean {
  const packages = join(root, 'packages');
  for (const name of readdirSync(packages)) {
    const dir = join(packages, name);
    if (!existsSync(join(dir, 'tsup.config.ts'))) continue;
    const dist = join(dir, 'dist');
    if (!existsSync(dist)) return false;
    let oldestBuilt = Number.POSITIVE_INFINITY;
    walk(dist, (_file, mtime) => {
      oldestBuilt = Math.min(oldestBuilt, mtime);
    });
    let newestSource = Math.max(statSync(join(dir, 'package.json')).mtimeMs, statSync(join(dir, 'tsup.config.ts')).mtimeMs);
    walk(join(dir, 'src'), (file, mtime) => {
      if (!file.endsWith('.test.ts')) newestSource = Math.max(newestSource, mtime);
    });
    if (!(oldestBuilt > newestSource)) return false;
  }
  return true;
}

function walk(dir: string, visit: (file: string, mtimeMs: number) => void): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, visit);
    else visit(path, statSync(path).mtimeMs);
  }
}

/** `packages/<name>/src/a/b.ts` → `packages/<name>/dist/a/b.js` when that file exists. */
function builtFile(path: string): string | undefined {
  const parts = relative(ROOT, path).split(sep);
  if (parts[0] !== 'packages' || parts[2] !== 'src' || !path.endsWith('.ts')) return undefined;
  const built = join(ROOT, 'packages', parts[1]!, 'dist', ...parts.slice(3)).replace(/\.ts$/, '.js');
  return existsSync(built) ? built : undefined;
}

function isPackageSource(path: string): boolean {
  const parts = relative(ROOT, path).split(sep);
  return parts[0] === 'packages' && parts[2] === 'src';
}

/** NODE_OPTIONS without `--conditions=@switchyard/source` and tsx's `--import`, which the test runner adds for its own files. */
function withoutSourceFlags(options: string): string {
  return options
    .split(/\s+/)
    .filter((flag) => flag !== '' && flag !== '--conditions=@switchyard/source' && !/^--import=\S*tsx\S*$/.test(flag))
    .join(' ');
}
