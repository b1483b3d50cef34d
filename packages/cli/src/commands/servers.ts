/**
 * @module servers
 * `yard serve --http <port> --grpc <port>`: the workflow HTTP API (with
 * `/metrics` from `@switchyard/observability`, and OpenTelemetry spans of
 * transitions, gates, subcommands and jobs when `tracing.enabled`) and the gRPC services over
 * one store, one workflow and one agent dispatcher (jobs run in this
 * process; remote agents join through gRPC's AgentService). And
 * `yard agent serve … -- <command>`: one terminal agent behind the agent
 * session server of `@switchyard/agent-session`.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { AgentSessionServer } from '@switchyard/agent-session';
import type { MessageRules } from '@switchyard/agent-session/engine';
import type { AgentAdapter } from '@switchyard/workflow';
import { AGENT_TYPE_NAMES as AGENT_TYPES } from '../agentTypes.js';
import { resolved } from '../config.js';
import { CliError } from '../errors.js';
import { watchCancellations } from '../jobWatch.js';
import { emit } from '../output.js';
import type { CommandContext } from '../program.js';
import { agentAdapters } from '../runtime.js';
import { intOption, withRuntime } from './shared.js';

/** `yard serve`: runs until SIGINT/SIGTERM (or stdin's stop signal in tests). */
export function serveCommand(
  ctx: CommandContext,
  opts: { http?: string; grpc?: string; host: string; insecure?: boolean; agentCommand?: string },
) {
  const httpPort = intOption(opts.http, '--http', { min: 0, max: 65535 });
  const grpcPort = intOption(opts.grpc, '--grpc', { min: 0, max: 65535 });
  if (httpPort === undefined && grpcPort === undefined)
    throw new CliError('invalid_argument', 'give --http <port>, --grpc <port> or both', { field: 'http' });
  return withRuntime(ctx, async (rt) => {
    const [{ createObservability }, http, grpc] = await Promise.all([
      import('@switchyard/observability'),
      httpPort !== undefined ? import('@switchyard/workflow-http') : undefined,
      grpcPort !== undefined ? import('@switchyard/server-grpc') : undefined,
    ]);
    const tracing = await openServeTracing(rt.config.tracing);
    const obs = createObservability(
      { logging: { output: 'stderr', level: ctx.globals.verbose >= 2 ? 'debug' : ctx.globals.verbose ? 'info' : 'warn' } },
      { serviceName: 'yard', ...(tracing ? { tracing: tracing.workflow } : {}) },
    );
    const detach = obs.observeWorkflow(rt.events);
    const hub = grpc ? new grpc.AgentHub({ clock: rt.workflow.clock }) : undefined;
    const adapters: AgentAdapter[] = [];
    if (opts.agentCommand !== undefined || rt.config.agent) {
      adapters.push(
        ...agentAdapters(rt.config, { agentEnv: ctx.io.env, ...(opts.agentCommand !== undefined ? { command: opts.agentCommand } : {}) }),
      );
    }
    if (hub) adapters.push(hub);
    const dispatcher = adapters.length ? rt.dispatcherWith(adapters) : undefined;
    const recovered = dispatcher ? await dispatcher.recoverInterrupted() : [];
    const watch = dispatcher ? watchCancellations(rt.store, dispatcher, rt.events) : undefined;
    const tool = await rt.dispatchTool();
    const sync = rt.sync();
    const started: { http?: string; grpc?: string } = {};
    const closers: (() => Promise<void>)[] = [];
    try {
      if (http && httpPort !== undefined) {
        const server = await http
          .startWorkflowHttpServer({
            workflow: rt.workflow,
            sync,
            dispatchTool: tool,
            ...(dispatcher ? { dispatcher } : {}),
            ...(obs.registry ? { metrics: obs.registry } : {}),
            apiKeys: resolved(rt.config.api_keys),
            host: opts.host,
            insecure: opts.insecure === true,
            onWarning: (message) => ctx.io.stderr(`warning: ${message}\n`),
            port: httpPort,
          })
          .catch(refusedBind);
        closers.push(() => server.close());
        started.http = server.url;
      }
      if (grpc && grpcPort !== undefined) {
        const server = await grpc
          .startGrpcServer({
            workflow: rt.workflow,
            dispatchTool: tool,
            ...(hub ? { agentHub: hub } : {}),
            apiKeys: resolved(rt.config.api_keys),
            host: opts.host,
            insecure: opts.insecure === true,
            onWarning: (message) => ctx.io.stderr(`warning: ${message}\n`),
            port: grpcPort,
          })
          .catch(refusedBind);
        closers.push(() => server.close());
        started.grpc = server.address;
      }
      const info = {
        http: started.http ?? null,
        grpc: started.grpc ?? null,
        repo: rt.repoRoot,
        agents: adapters.map((a) => a.kind),
        recovered_jobs: recovered.map((j) => j.id),
      };
      emit(ctx.io, ctx.globals.output, info, {
        text: [
          ...(started.http ? [`http  ${started.http}  (openapi: ${started.http}/openapi.json, metrics: ${started.http}/metrics)`] : []),
          ...(started.grpc ? [`grpc  ${started.grpc}  (health and reflection on)`] : []),
          `repo  ${rt.repoRoot}`,
        ].join('\n'),
      });
      await (ctx.io.stopSignal ?? new Promise<never>(() => undefined));
    } finally {
      watch?.stop();
      for (const close of closers.reverse()) await close().catch(() => undefined);
      detach();
      await obs.stop();
      // Spans still queued are exported before the process goes.
      await tracing?.shutdown().catch((error: unknown) => ctx.io.stderr(`warning: tracing: ${(error as Error).message}\n`));
    }
  });
}

/**
 * The tracer `tracing:` in the config asks for (undefined when it is absent or off), with the gateway's rules:
 * observability's schema checks the section, and OpenTelemetry, an optional peer, is loaded only when wanted.
 */
async function openServeTracing(section: Record<string, unknown> | undefined) {
  if (section?.enabled !== true) return undefined;
  const { tracingConfigSchema } = await import('@switchyard/observability/config');
  const parsed = tracingConfigSchema.safeParse(section);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = ['tracing', ...issue.path.map(String)].join('.');
    throw new CliError('invalid_argument', `config ${field}: ${issue.message}`, { field: `config.${field}` });
  }
  let tracingModule: typeof import('@switchyard/observability/tracing');
  try {
    tracingModule = await import('@switchyard/observability/tracing');
  } catch (error) {
    throw new CliError(
      'not_implemented',
      `tracing.enabled needs the OpenTelemetry packages (${(error as Error).message}): install @opentelemetry/api @opentelemetry/core @opentelemetry/resources @opentelemetry/sdk-trace @opentelemetry/semantic-conventions @opentelemetry/exporter-trace-otlp-http @opentelemetry/exporter-zipkin`,
      { field: 'config.tracing' },
      { cause: error },
    );
  }
  return tracingModule.createTracing(parsed.data);
}

/** The rules in the JSON file `path` (`--rules`), checked by the server package's schema. */
async function customRules(path: string, cwd: string, build: (spec: unknown) => MessageRules): Promise<MessageRules> {
  let spec: unknown;
  try {
    spec = JSON.parse(await readFile(resolve(cwd, path), 'utf8'));
  } catch (error) {
    throw new CliError('invalid_argument', `--rules: cannot read ${path} as JSON: ${(error as Error).message}`, { field: 'rules' });
  }
  try {
    return build(spec);
  } catch (error) {
    throw new CliError('invalid_argument', `--rules: ${(error as Error).message}`, { field: 'rules' });
  }
}

/** Agent types `--type` accepts, with the aliases the server knows. */
const AGENT_TYPE_NAMES = new Set<string>([...AGENT_TYPES, 'claude-code', 'cursor-agent', 'q', 'custom', 'generic']);

/** `yard agent serve [--port 3284] [--type kind] [--transport pty|acp] [--api-key-env NAME] -- <command> [args…]`. */
export async function agentServeCommand(
  ctx: CommandContext,
  command: string[],
  opts: {
    port: string;
    host: string;
    insecure?: boolean;
    type?: string;
    transport: 'pty' | 'acp';
    allowedHost: string[];
    apiKeyEnv?: string;
    termWidth: string;
    termHeight: string;
    allowedOrigin: string[];
    initialPrompt?: string;
    stateFile?: string;
    rules?: string;
    acpPermissions?: 'reject' | 'allow' | 'ask';
    acpPermissionTimeout?: string;
  },
): Promise<number> {
  const [executable, ...args] = command;
  if (!executable) throw new CliError('invalid_argument', 'the agent command is required after --', { field: 'command' });
  const port = intOption(opts.port, '--port', { min: 0, max: 65535 })!;
  const cols = intOption(opts.termWidth, '--term-width', { min: 20, max: 1000 })!;
  const rows = intOption(opts.termHeight, '--term-height', { min: 5, max: 1000 })!;
  const permissionTimeoutSeconds = intOption(opts.acpPermissionTimeout ?? '300', '--acp-permission-timeout', { min: 1, max: 86_400 })!;
  const type = opts.type?.toLowerCase();
  if (type !== undefined && opts.transport === 'pty' && !AGENT_TYPE_NAMES.has(type))
    throw new CliError('invalid_argument', `--type: unknown agent type ${opts.type}; one of ${[...AGENT_TYPE_NAMES].join(', ')}`, {
      field: 'type',
    });
  for (const origin of opts.allowedOrigin)
    if (origin !== '*' && !/^https?:\/\/[^/\s]+$/u.test(origin))
      throw new CliError('invalid_argument', `--allowed-origin: ${origin} is not an origin like https://example.com or *`, {
        field: 'allowed_origin',
      });
  if (opts.initialPrompt !== undefined && opts.initialPrompt.trim() === '')
    throw new CliError('invalid_argument', '--initial-prompt must not be empty', { field: 'initial_prompt' });
  // The key comes from the environment, never the command line, where `ps` would show it to every user.
  const apiKey = opts.apiKeyEnv === undefined ? undefined : ctx.io.env[opts.apiKeyEnv];
  if (opts.apiKeyEnv !== undefined && !apiKey)
    throw new CliError('invalid_argument', `--api-key-env: environment variable ${opts.apiKeyEnv} is not set`, { field: 'api_key_env' });
  const { customAgentRules, startAgentSessionServer } = await import('@switchyard/agent-session');
  const rules = opts.rules === undefined ? undefined : await customRules(opts.rules, ctx.io.cwd, customAgentRules);
  const start = () =>
    startAgentSessionServer({
      host: opts.host,
      port,
      transport: opts.transport,
      command: executable,
      args,
      cwd: ctx.io.cwd,
      ...(type !== undefined ? { agentType: type } : rules ? { agentType: 'custom' } : {}),
      ...(rules ? { rules } : {}),
      ...(opts.transport === 'acp' && opts.acpPermissions ? { acpPermissions: opts.acpPermissions } : {}),
      ...(opts.transport === 'acp' ? { acpPermissionTimeoutMs: permissionTimeoutSeconds * 1000 } : {}),
      ...(opts.allowedHost.length ? { allowedHosts: opts.allowedHost } : {}),
      ...(apiKey ? { apiKey } : {}),
      cols,
      rows,
      ...(opts.allowedOrigin.length ? { cors: { origins: opts.allowedOrigin } } : {}),
      ...(opts.initialPrompt !== undefined ? { initialPrompt: opts.initialPrompt } : {}),
      ...(opts.stateFile !== undefined ? { stateFile: resolve(ctx.io.cwd, opts.stateFile) } : {}),
      insecure: opts.insecure === true,
      onWarning: (message) => ctx.io.stderr(`warning: ${message}\n`),
    });
  let server: AgentSessionServer;
  try {
    server = await start();
  } catch (error) {
    if (error instanceof Error && error.name === 'UnsafeBindError') refusedBind(error);
    // The server's own checks (a state file that is not one, a bad transport option) are usage errors.
    const failure = error as { code?: unknown; field?: unknown; message: string };
    if (failure.code === 'invalid_input')
      throw new CliError('invalid_argument', failure.message, typeof failure.field === 'string' ? { field: failure.field } : {});
    throw error;
  }

  try {
    emit(
      ctx.io,
      ctx.globals.output,
      {
        url: server.url,
        command: executable,
        args,
        transport: opts.transport,
        agent_type: server.session.agentType,
        api_key_required: apiKey !== undefined,
      },
      {
        text: `agent session server for ${executable} at ${server.url} (chat: ${server.url}/chat, openapi: ${server.url}/openapi.json${apiKey ? `; API key from ${opts.apiKeyEnv} required` : ''})`,
      },
    );
    await (ctx.io.stopSignal ?? new Promise<never>(() => undefined));
  } finally {
    await server.close();
  }
  return 0;
}

/** A bind the servers refused (others could reach it and no key is set) is the caller's to fix: exit 2, naming --host. */
function refusedBind(error: unknown): never {
  if (error instanceof Error && error.name === 'UnsafeBindError') throw new CliError('invalid_argument', error.message, { field: 'host' });
  throw error;
}

/** Ctrl-] detaches, as telnet has it: every other key (Ctrl-C included) goes to the agent. */
const DETACH_KEY = '\x1d';
/** Raw input the server takes in one message (its limit is 4 KiB; characters can take 4 bytes each). */
const RAW_CHUNK_CHARS = 1000;

/** The screen as terminal output: cleared, drawn row by row, the cursor put where the agent has it. */
function drawScreen(screen: { lines: string[]; cursor: { row: number; col: number } }): string {
  return `\x1b[H\x1b[2J${screen.lines.join('\r\n')}\x1b[${screen.cursor.row + 1};${screen.cursor.col + 1}H`;
}

/**
 * `yard agent attach <url> [--api-key-env NAME]`: mirrors the agent's live screen (`GET /screen` as
 * a stream) in this terminal and forwards keystrokes as raw messages, until Ctrl-] (or the server
 * ends the stream, or the process is asked to stop).
 */
export async function agentAttachCommand(ctx: CommandContext, url: string, opts: { apiKeyEnv?: string }): Promise<number> {
  let base: URL;
  try {
    base = new URL(url.endsWith('/') ? url : `${url}/`);
  } catch {
    throw new CliError('invalid_argument', `not a URL: ${url}`, { field: 'url' });
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw new CliError('invalid_argument', `the URL must be http or https, not ${base.protocol}`, { field: 'url' });
  const apiKey = opts.apiKeyEnv === undefined ? undefined : ctx.io.env[opts.apiKeyEnv];
  if (opts.apiKeyEnv !== undefined && !apiKey)
    throw new CliError('invalid_argument', `--api-key-env: environment variable ${opts.apiKeyEnv} is not set`, { field: 'api_key_env' });
  const auth: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  const stop = new AbortController();
  let response: Response;
  try {
    response = await fetch(new URL('screen', base), { headers: { ...auth, accept: 'text/event-stream' }, signal: stop.signal });
  } catch (error) {
    throw new CliError('not_found', `cannot reach the agent session server at ${base.href}: ${(error as Error).message}`, { field: 'url' });
  }
  if (!response.ok || !response.body) {
    const body = (await response.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
    const why = body?.error?.message ?? `HTTP ${response.status}`;
    throw new CliError(response.status === 401 ? 'invalid_argument' : 'not_found', `the server refused the screen stream: ${why}`, {
      field: response.status === 401 ? 'api_key_env' : 'url',
    });
  }
  const keys = ctx.io.openKeys?.();
  if (!keys) throw new CliError('not_implemented', 'attach needs standard input');
  let detached = false;
  const sendKeys = async (text: string) => {
    for (let i = 0; i < text.length; i += RAW_CHUNK_CHARS) {
      const answer = await fetch(new URL('message', base), {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'raw', content: text.slice(i, i + RAW_CHUNK_CHARS) }),
      });
      if (!answer.ok) ctx.io.stderr(`\r\nyard: the server refused the keys (HTTP ${answer.status})\r\n`);
    }
  };
  const forward = (async () => {
    for await (const chunk of keys.keys) {
      const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
      const cut = text.indexOf(DETACH_KEY);
      const keep = cut < 0 ? text : text.slice(0, cut);
      if (keep) await sendKeys(keep);
      if (cut >= 0) break;
    }
    detached = true;
    stop.abort();
  })();
  const mirror = (async () => {
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value.replace(/\r\n/g, '\n');
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trimStart())
            .join('\n');
          if (/^event: screen$/mu.test(frame) && data) ctx.io.stdout(drawScreen(JSON.parse(data)));
          end = buffer.indexOf('\n\n');
        }
      }
    } catch (error) {
      if (!stop.signal.aborted) throw error;
    }
  })();
  try {
    await Promise.race([mirror, forward, ...(ctx.io.stopSignal ? [ctx.io.stopSignal] : [])]);
  } finally {
    stop.abort();
    keys.restore();
  }
  ctx.io.stdout(`\r\n${detached ? 'detached' : 'the server ended the screen stream'}\r\n`);
  return detached ? 0 : 1;
}
