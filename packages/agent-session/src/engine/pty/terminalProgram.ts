/**
 * @module terminalProgram
 * A program running on a pseudo-terminal (node-pty), its output mirrored
 * onto a {@link HeadlessScreen}. node-pty is native and optional: it is
 * loaded on first use (see ptyModule), and a missing install is a clear
 * `missing_dependency` error rather than a crash at import time.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { AgentExit } from '../conversation.js';
import { AgentSessionError } from '../errors.js';
import { HeadlessScreen, type ScreenSize } from './headlessScreen.js';
import { loadPtyModule } from './ptyModule.js';

/** A program with a screen: what the PTY session drives. Tests may supply their own. */
export interface TerminalProgram {
  readonly screen: HeadlessScreen;
  readonly pid: number | undefined;
  /** Sends input (keys, pastes) to the program. */
  write(data: string): void;
  /** Calls `listener` once when the program ends. */
  onExit(listener: (exit: AgentExit) => void): void;
  /** Asks the program to end (SIGTERM unless told otherwise). */
  kill(signal?: string): void;
  resize(cols: number, rows: number): void;
}

/** How to start a program on a terminal. */
export interface SpawnOptions extends ScreenSize {
  command: string;
  args?: readonly string[];
  /** Working directory (default: the server's). */
  cwd?: string;
  /** Environment (default: the server's, with `TERM=xterm-256color`). */
  env?: NodeJS.ProcessEnv;
}

/**
 * Finds `command` the way a shell would (a path, or a name on `PATH`), so a
 * typo is reported before a terminal is made for it.
 */
export function resolveCommand(command: string, cwd: string, env: NodeJS.ProcessEnv): string {
  const executable = (path: string) => {
    try {
      if (!statSync(path).isFile()) return false;
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (command.includes('/')) {
    const path = isAbsolute(command) ? command : resolve(cwd, command);
    if (executable(path)) return path;
  } else {
    for (const dir of (env.PATH ?? '').split(delimiter)) {
      if (dir && executable(join(dir, command))) return join(dir, command);
    }
  }
  throw new AgentSessionError('start_failed', `command not found or not executable: ${command}`, { field: 'command' });
}

const SIGNAL_NAMES = new Map(Object.entries(osConstants.signals).map(([name, number]) => [number, name]));

/**
 * node-pty reports a killed program as exit code 0 with the signal's number. A killed program has no exit code
 * (0 would read as success), and its signal is named as `child_process` names it, as over the ACP transport.
 */
export function ptyExit(exitCode: number, signal: number | undefined): AgentExit {
  if (!signal) return { exitCode, signal: null };
  return { exitCode: null, signal: SIGNAL_NAMES.get(signal) ?? signal };
}

/**
 * Starts `command` on a new pseudo-terminal (no shell in between: the
 * arguments are passed as they are).
 *
 * @example
 * ```ts
 * const program = await spawnTerminalProgram({ command: 'python3', args: ['-i'] });
 * program.write('print(6 * 7)\r');
 * ```
 */
export async function spawnTerminalProgram(options: SpawnOptions): Promise<TerminalProgram> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const env: NodeJS.ProcessEnv = { ...(options.env ?? process.env), TERM: 'xterm-256color' };
  const file = resolveCommand(options.command, cwd, env);
  const pty = await loadPtyModule();
  const screen = await HeadlessScreen.create(options);
  const child = pty.spawn(file, [...(options.args ?? [])], {
    name: 'xterm-256color',
    cols: screen.cols,
    rows: screen.rows,
    cwd,
    env: Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined)),
  });
  let exited = false;
  child.onData((data) => void screen.write(data));
  // Programs ask the terminal questions (where is the cursor? what are you?) and wait for the answer.
  screen.onReply((data) => {
    if (!exited) child.write(data);
  });
  const exitListeners: ((exit: AgentExit) => void)[] = [];
  child.onExit(({ exitCode, signal }) => {
    exited = true;
    const exit = ptyExit(exitCode, signal);
    for (const listener of exitListeners) listener(exit);
  });
  return {
    screen,
    pid: child.pid,
    write(data) {
      if (exited) throw new AgentSessionError('agent_exited', 'the agent has exited');
      child.write(data);
    },
    onExit(listener) {
      exitListeners.push(listener);
    },
    kill(signal) {
      if (!exited) child.kill(signal);
    },
    resize(cols, rows) {
      screen.resize(cols, rows);
      if (!exited) child.resize(cols, rows);
    },
  };
}
