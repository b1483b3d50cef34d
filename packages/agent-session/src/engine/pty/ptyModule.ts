/**
 * @module ptyModule
 * Finding a pseudo-terminal module at run time. node-pty is native: its
 * 1.1 release ships no Linux binaries and builds from source with node-gyp,
 * which needs a compiler. So this package depends, optionally, on
 * `@lydell/node-pty`, a maintained build of the same node-pty with prebuilt
 * binaries for Linux, macOS and Windows on x64 and arm64 (the one Gemini CLI
 * and Qwen Code ship with), and uses `node-pty` itself first when the user
 * installed and built it. When neither loads, the error says exactly what to
 * install; nothing is loaded until a PTY session starts, so the ACP
 * transport and the engine's other parts work without either.
 */
import { AgentSessionError } from '../errors.js';

/** node-pty's API (both modules have it). */
export type NodePty = typeof import('node-pty');

/** The modules tried, in order. */
export const PTY_MODULES: readonly string[] = ['node-pty', '@lydell/node-pty'];

/** What to run when no module loads (also in docs/agent-session.md). */
export const PTY_INSTALL_HINT =
  'run `npm install @lydell/node-pty` next to @switchyard/agent-session (prebuilt for Linux, macOS and Windows on x64 and arm64; no compiler needed), ' +
  'or on another platform `npm install node-pty`, which builds from source with node-gyp and needs python3, make and a C++ compiler ' +
  '(Debian or Ubuntu: `apt-get install python3 make g++`; Fedora: `dnf install python3 make gcc-c++`; macOS: `xcode-select --install`)';

const loaded = new Map<string, Promise<NodePty>>();

async function importPty(name: string): Promise<NodePty> {
  const module = (await import(name)) as Partial<NodePty> & { default?: NodePty };
  // node-pty is CommonJS: depending on the loader its exports sit on the namespace or on `default`.
  const pty = (typeof module.spawn === 'function' ? module : module.default) as NodePty | undefined;
  if (typeof pty?.spawn !== 'function') throw new Error(`${name} has no spawn function`);
  return pty;
}

/** The first line of why a module did not load (a missing module, a binary built for another Node). */
function reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.slice(0, 200);
}

/**
 * The first of `candidates` that loads; a `missing_dependency` error naming what to install when none does.
 *
 * @example
 * ```ts
 * const pty = await loadPtyModule();
 * const term = pty.spawn('bash', [], { cols: 80, rows: 24 });
 * ```
 */
export async function loadPtyModule(candidates: readonly string[] = PTY_MODULES): Promise<NodePty> {
  const failures: string[] = [];
  for (const name of candidates) {
    let attempt = loaded.get(name);
    if (!attempt) {
      attempt = importPty(name);
      loaded.set(name, attempt);
    }
    try {
      return await attempt;
    } catch (error) {
      // Not cached: a module installed while the server runs is found on the next try.
      loaded.delete(name);
      failures.push(`${name}: ${reason(error)}`);
    }
  }
  throw new AgentSessionError(
    'missing_dependency',
    `the pty transport needs node-pty, and none of ${candidates.join(', ')} loads (${failures.join('; ')}): ${PTY_INSTALL_HINT}`,
  );
}
