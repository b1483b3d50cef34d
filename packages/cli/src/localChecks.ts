/**
 * @module localChecks
 * Finds a repository's own test and lint commands, for `yard init` to
 * record as the local CI command: package.json scripts (run with the
 * package manager its lockfile names; a `security` script is the security
 * scan), pytest (and ruff and bandit when configured),
 * `go test` and `go vet`, `cargo test` and `cargo clippy`. Each is a
 * program and its arguments, to run without a shell.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One check: what it is, and the command that runs it. */
export interface LocalCheck {
  name: string;
  kind: 'test' | 'lint' | 'security';
  run: string[];
}

/** npm's placeholder `test` script (`npm init`), which only fails. */
const NPM_PLACEHOLDER = /no test specified/;

async function text(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}

/** The package manager a Node repository uses, from its lockfile (npm without one). */
function packageManager(root: string, declared: unknown): string {
  if (typeof declared === 'string') {
    const name = declared.split('@')[0];
    if (name === 'pnpm' || name === 'yarn' || name === 'npm' || name === 'bun') return name;
  }
  if (existsSync(join(root, 'pnpm-lock.yaml'))) return 'pnpm';
  if (existsSync(join(root, 'yarn.lock'))) return 'yarn';
  if (existsSync(join(root, 'bun.lockb')) || existsSync(join(root, 'bun.lock'))) return 'bun';
  return 'npm';
}

/**
 * The checks a repository's own files name, tests first.
 *
 * @example
 * ```ts
 * await detectLocalChecks('/repo'); // [{ name: 'pnpm test', kind: 'test', run: ['pnpm', 'test'] }, …]
 * ```
 */
export async function detectLocalChecks(root: string): Promise<LocalCheck[]> {
  const checks: LocalCheck[] = [];
  const add = (kind: LocalCheck['kind'], run: string[]) => checks.push({ name: run.join(' '), kind, run });

  const pkgText = await text(join(root, 'package.json'));
  if (pkgText !== undefined) {
    let pkg: { scripts?: Record<string, unknown>; packageManager?: unknown } = {};
    try {
      pkg = JSON.parse(pkgText) as typeof pkg;
    } catch {
      // A package.json that does not parse names no scripts.
    }
    const scripts = pkg.scripts ?? {};
    const pm = packageManager(root, pkg.packageManager);
    if (typeof scripts.test === 'string' && !NPM_PLACEHOLDER.test(scripts.test)) add('test', [pm, 'test']);
    if (typeof scripts.lint === 'string') add('lint', [pm, 'run', 'lint']);
    // The repository's own security scan (`npm audit` is not one: it needs the registry).
    for (const name of ['security', 'scan:security', 'audit:security'])
      if (typeof scripts[name] === 'string') {
        add('security', [pm, 'run', name]);
        break;
      }
  }

  const pyproject = (await text(join(root, 'pyproject.toml'))) ?? '';
  const setupCfg = (await text(join(root, 'setup.cfg'))) ?? '';
  const toxIni = (await text(join(root, 'tox.ini'))) ?? '';
  const pytest =
    existsSync(join(root, 'pytest.ini')) ||
    existsSync(join(root, 'conftest.py')) ||
    /^\[tool\.pytest/m.test(pyproject) ||
    /^\[tool:pytest\]/m.test(setupCfg) ||
    /^\[pytest\]/m.test(toxIni);
  if (pytest) add('test', ['pytest']);
  if (/^\[tool\.bandit/m.test(pyproject)) add('security', ['bandit', '-c', 'pyproject.toml', '-r', '.']);
  if (existsSync(join(root, 'ruff.toml')) || existsSync(join(root, '.ruff.toml')) || /^\[tool\.ruff/m.test(pyproject))
    add('lint', ['ruff', 'check', '.']);

  if (existsSync(join(root, 'go.mod'))) {
    add('test', ['go', 'test', './...']);
    add('lint', ['go', 'vet', './...']);
  }
  if (existsSync(join(root, 'Cargo.toml'))) {
    add('test', ['cargo', 'test']);
    add('lint', ['cargo', 'clippy', '--', '-D', 'warnings']);
  }
  const order: LocalCheck['kind'][] = ['test', 'lint', 'security'];
  return order.flatMap((kind) => checks.filter((c) => c.kind === kind));
}
