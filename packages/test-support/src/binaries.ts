/**
 * @module binaries
 * Headless Chromium and Prometheus' `promtool`, found on the machine, and
 * the coding-agent CLIs the gateway is tested with, installed from npm at
 * pinned versions as this package's devDependencies.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
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

/** The coding-agent CLIs this package pins as devDependencies, by the name of their command. */
export const AGENT_CLI_PACKAGES = {
  claude: '@anthropic-ai/claude-code',
  codex: '@openai/codex',
  gemini: '@google/gemini-cli',
  qwen: '@qwen-code/qwen-code',
  opencode: 'opencode-ai',
} as const;

/** A coding-agent CLI's command name (`claude`, `codex`, `gemini`, `qwen`, `opencode`). */
export type AgentCliName = keyof typeof AGENT_CLI_PACKAGES;

/** A coding-agent CLI installed from npm. */
export interface AgentCliForTests {
  /**
   * What to run, before the CLI's own arguments: `[node, script]` for a JavaScript launcher,
   * `[binary]` for a native one (Claude Code's and OpenCode's install scripts put theirs in place).
   */
  command: string[];
  /** The installed version (`0.171.0`). */
  version: string;
  /** The npm package it comes from. */
  packageName: string;
}

/**
 * Finds a coding-agent CLI this package pins as a devDependency (`pnpm install` puts it, with
 * its native binary for this platform where it has one, under node_modules).
 *
 * @example
 * ```ts
 * const claude = requireAgentCli('claude');
 * test('claude runs through the gateway', { skip: claude.skip }, async () => { ... });
 * ```
 */
export function requireAgentCli(name: AgentCliName, env: NodeJS.ProcessEnv = process.env): Requirement<AgentCliForTests> {
  const packageName = AGENT_CLI_PACKAGES[name];
  let manifest: string;
  try {
    manifest = createRequire(import.meta.url).resolve(`${packageName}/package.json`);
  } catch {
    return missing(`${packageName} is not installed`, 'Run `pnpm install` (it is a devDependency of @switchyard/test-support).', env);
  }
  const { version, bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string; bin: Record<string, string> };
  const entry = bin[name];
  if (!entry) return missing(`${packageName} has no \`${name}\` command`, 'Check the pinned version in test-support.', env);
  const path = join(dirname(manifest), entry);
  if (isNodeScript(path)) return { available: true, skip: false, command: [process.execPath, path], version, packageName };
  if (!isNativeBinary(path)) {
    return missing(
      `${packageName}'s native binary is not in place (its install script did not run)`,
      'Run `pnpm install`: the package must be listed in onlyBuiltDependencies in pnpm-workspace.yaml.',
      env,
    );
  }
  return { available: true, skip: false, command: [path], version, packageName };
}

/** Whether `path` starts with a `#!` line naming node, or is a .js/.mjs/.cjs module. */
function isNodeScript(path: string): boolean {
  if (/\.[cm]?js$/.test(path)) return true;
  return firstBytes(path, 64).toString('latin1').startsWith('#!') && firstBytes(path, 64).toString('latin1').includes('node');
}

/** Whether `path` is an ELF or Mach-O executable (an install script's placeholder is neither). */
function isNativeBinary(path: string): boolean {
  const magic = firstBytes(path, 4);
  return magic.toString('latin1') === '\x7fELF' || magic.readUInt32LE(0) === 0xfeedfacf || magic.readUInt32BE(0) === 0xcffaedfe;
}

function firstBytes(path: string, count: number): Buffer {
  const buffer = Buffer.alloc(count);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    readSync(fd, buffer, 0, count, 0);
  } catch {
    return Buffer.alloc(count);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return buffer;
}

/** The Codex CLI (`@openai/codex`, its native binary inside the registry package). */
export interface CodexCliForTests {
  /** `node` and the package's launcher, which picks the platform's binary: run `[...command, 'exec', …]`. */
  command: [string, string];
  /** The installed version (`0.171.0`). */
  version: string;
}

/**
 * Finds the Codex CLI this package pins as a devDependency.
 *
 * @example
 * ```ts
 * const codex = requireCodexCli();
 * test('codex runs through the gateway', { skip: codex.skip }, async () => { ... });
 * ```
 */
export function requireCodexCli(env: NodeJS.ProcessEnv = process.env): Requirement<CodexCliForTests> {
  const cli = requireAgentCli('codex', env);
  if (!cli.available) return cli;
  return { available: true, skip: false, command: [cli.command[0]!, cli.command[1]!], version: cli.version };
}
