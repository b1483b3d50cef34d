/**
 * @module binaries
 * Headless Chromium and Prometheus' `promtool`, found on the machine, and
 * the coding-agent CLIs the gateway is tested with, installed from npm at
 * pinned versions as this package's devDependencies.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { missing, type Requirement } from './requirement.js';

function findExecutable(candidates: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  for (const candidate of candidates) {
    if (candidate.includes('/')) {
      if (existsSync(candidate)) return candidate;
      continue;
    }
    for (const dir of (env.PATH ?? '').split(':')) {
      if (dir && existsSync(`${dir}/${candidate}`)) return `${dir}/${candidate}`;
    }
  }
  return undefined;
}

/** Chromium for playwright-core, with the flags that keep it off the network. */
export interface ChromiumForTests {
  executablePath: string;
  /** Launch arguments: headless, no sandbox (root in CI), no background traffic. */
  args: string[];
}

/**
 * Finds headless Chromium (`CHROMIUM_PATH`, else /usr/bin/chromium).
 *
 * @example
 * ```ts
 * const chromium = requireChromium();
 * test('page renders', { skip: chromium.skip }, async () => { ... });
 * ```
 */
export function requireChromium(env: NodeJS.ProcessEnv = process.env): Requirement<ChromiumForTests> {
  const executablePath = findExecutable(
    [env.CHROMIUM_PATH ?? '', '/usr/bin/chromium', 'chromium', 'chromium-browser'].filter(Boolean),
    env,
  );
  if (!executablePath) {
    return missing(
      'Chromium is not installed',
      'Install it with `apt-get install chromium` (or set CHROMIUM_PATH) to run the browser tests.',
      env,
    );
  }
  return {
    available: true,
    skip: false,
    executablePath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  };
}

/** The `promtool` binary. */
export interface PromtoolForTests {
  executablePath: string;
  /** Runs `promtool check metrics` on `text`; resolves to its output, throws with it on failure. */
  checkMetrics(text: string): string;
}

/** Finds `promtool` (Debian package `prometheus`). */
export function requirePromtool(env: NodeJS.ProcessEnv = process.env): Requirement<PromtoolForTests> {
  const executablePath = findExecutable(['promtool'], env);
  if (!executablePath) {
    return missing('promtool is not installed', 'Install it with `apt-get install prometheus` to check the metrics format.', env);
  }
  return {
    available: true,
    skip: false,
    executablePath,
    checkMetrics(text: string): string {
      return execFileSync(executablePath, ['check', 'metrics'], { input: text, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
    },
  };
}

/** The Codex CLI (`@openai/codex`, its native binary inside the registry package). */
export interface CodexCliForTests {
  /** `node` and the package's launcher, which picks the platform's binary: run `[...command, 'exec', …]`. */
  command: [string, string];
  /** The installed version (`0.171.0`). */
  version: string;
}

/**
 * Finds the Codex CLI this package pins as a devDependency (`pnpm install`
 * puts it, with the native binary of this platform, under node_modules).
 *
 * @example
 * ```ts
 * const codex = requireCodexCli();
 * test('codex runs through the gateway', { skip: codex.skip }, async () => { ... });
 * ```
 */
export function requireCodexCli(env: NodeJS.ProcessEnv = process.env): Requirement<CodexCliForTests> {
  let manifest: string;
  try {
    manifest = createRequire(import.meta.url).resolve('@openai/codex/package.json');
  } catch {
    return missing('@openai/codex is not installed', 'Run `pnpm install` (it is a devDependency of @switchyard/test-support).', env);
  }
  const { version, bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string; bin: { codex: string } };
  return { available: true, skip: false, command: [process.execPath, join(dirname(manifest), bin.codex)], version };
}
