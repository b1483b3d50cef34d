/**
 * @module binaries
 * Headless Chromium and Prometheus' `promtool`, found on the machine.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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
