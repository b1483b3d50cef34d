/**
 * @module gatewayProcesses
 * Runs N real gateway processes (`switchyard serve`, built or from source) for
 * multi-node tests: each node gets a config file in a temp directory and a
 * free loopback port known before any node starts (peers need each other's
 * URLs), start-up waits until `GET /health` answers, and every process is
 * killed at teardown — by `after()`, and by a process `exit` hook should the
 * test runner go down first — so a failing test leaks no gateway.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { workspaceProgram } from '@switchyard/test-support';
import { parse, stringify } from 'yaml';

/** `switchyard`: the build when it is fresh, else the source through tsx (test-support's workspaceProgram). */
const SWITCHYARD = workspaceProgram(new URL('../src/bin.ts', import.meta.url));
/** Output kept per node for failure messages. */
const LOG_LIMIT = 64 * 1024;

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Reserves a free loopback port (closed again at once, so a node can bind it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A config file as written (`${VAR}` references left for the node to expand), to adapt before starting it. */
export function readConfigFile(path: string): Record<string, unknown> {
  return parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

/** What a node's config builder learns about the cluster. */
export interface NodeContext {
  index: number;
  /** Every node's port, this one's included. */
  ports: readonly number[];
  /** Every node's base URL (`http://127.0.0.1:<port>`). */
  urls: readonly string[];
  /** This node's own directory (its config file and auth-dir live there). */
  dir: string;
}

/** One gateway process. */
export interface GatewayNode {
  readonly index: number;
  readonly port: number;
  readonly url: string;
  readonly configPath: string;
  /** The node's config as written (before parsing). */
  readonly config: Record<string, unknown>;
  /** True while the process runs. */
  readonly alive: boolean;
  /** The process id of the current (or last) process. */
  readonly pid: number | undefined;
  /** The process's stdout and stderr so far (capped). */
  output(): string;
  /** Sends a signal and waits for the process to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the process again on the same port and config; resolves once it is ready. */
  restart(): Promise<void>;
  /** Rewrites the node's config file (the gateway reloads it on its own). */
  writeConfig(config: Record<string, unknown>): void;
}

/** A set of gateway processes. */
export interface GatewayNodes {
  nodes: GatewayNode[];
  /** Kills every process and removes the temp directory. */
  close(): Promise<void>;
}

/** Options of {@link startGatewayNodes}. */
export interface StartGatewayNodesOptions {
  count: number;
  /** Builds node `index`'s config. `host`, `port`, `auth-dir` and a disabled metrics listener are filled in unless given. */
  config: (context: NodeContext) => Record<string, unknown>;
  /** Extra environment for every process. */
  env?: NodeJS.ProcessEnv;
  /**
   * Time allowed for a node to become ready (default 120 s). Readiness is polled, so this is only the
   * give-up point: a start-up takes a second or two, but on a loaded machine (tsx compiling the sources,
   * other suites running) it has taken over 30 s.
   */
  readyTimeoutMs?: number;
}

/**
 * Starts `count` gateway processes and waits until all answer `GET /health`.
 * Teardown is registered with `after()`.
 *
 * @example
 * ```ts
 * const { nodes } = await startGatewayNodes({ count: 3, config: ({ urls, index }) => ({ providers: {…} }) });
 * await nodes[2]!.kill('SIGKILL');
 * ```
 */
export async function startGatewayNodes(options: StartGatewayNodesOptions): Promise<GatewayNodes> {
  const root = mkdtempSync(join(tmpdir(), 'switchyard-nodes-'));
  const ports: number[] = [];
  while (ports.length < options.count) {
    const port = await freePort();
    if (!ports.includes(port)) ports.push(port);
  }
  const urls = ports.map((port) => `http://127.0.0.1:${port}`);
  const nodes = ports.map((port, index) => {
    const dir = join(root, `node-${index}`);
    const config = {
      host: '127.0.0.1',
      port,
      'auth-dir': join(dir, 'auths'),
      metrics: { enabled: false },
      ...options.config({ index, ports, urls, dir }),
    };
    return new ProcessNode(index, port, urls[index]!, dir, config, options);
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await Promise.all(nodes.map((node) => node.kill('SIGKILL')));
    rmSync(root, { recursive: true, force: true });
  };
  after(close);
  try {
    await Promise.all(nodes.map((node) => node.start()));
  } catch (error) {
    await close();
    throw error;
  }
  return { nodes, close };
}

class ProcessNode implements GatewayNode {
  readonly configPath: string;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private log = '';

  constructor(
    readonly index: number,
    readonly port: number,
    readonly url: string,
    dir: string,
    public config: Record<string, unknown>,
    private readonly options: StartGatewayNodesOptions,
  ) {
    this.configPath = join(dir, 'config.yaml');
    this.writeConfig(config);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  output(): string {
    return this.log;
  }

  writeConfig(config: Record<string, unknown>): void {
    this.config = config;
    mkdirSync(join(this.configPath, '..'), { recursive: true, mode: 0o700 });
    writeFileSync(this.configPath, stringify(config), { mode: 0o600 });
  }

  async start(): Promise<void> {
    const child = spawn(process.execPath, [...SWITCHYARD.args, 'serve', '--config', this.configPath], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...SWITCHYARD.env, ...this.options.env },
    });
    this.child = child;
    running.add(child);
    const append = (chunk: Buffer) => {
      this.log = (this.log + chunk.toString('utf8')).slice(-LOG_LIMIT);
    };
    child.stdout!.on('data', append);
    child.stderr!.on('data', append);
    this.exited = new Promise((resolve) =>
      child.once('exit', () => {
        running.delete(child);
        resolve();
      }),
    );
    await this.waitReady(child);
  }

  private async waitReady(child: ChildProcess): Promise<void> {
    const deadline = Date.now() + (this.options.readyTimeoutMs ?? 120_000);
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`gateway node ${this.index} exited during start-up (${child.exitCode ?? child.signalCode}):\n${this.log}`);
      }
      try {
        const response = await fetch(`${this.url}/health`, { signal: AbortSignal.timeout(1_000) });
        await response.arrayBuffer();
        if (response.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    child.kill('SIGKILL');
    throw new Error(`gateway node ${this.index} was not ready within the deadline:\n${this.log}`);
  }

  async kill(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.alive) this.child!.kill(signal);
    await this.exited;
  }

  async restart(): Promise<void> {
    await this.kill('SIGKILL');
    await this.start();
  }
}
