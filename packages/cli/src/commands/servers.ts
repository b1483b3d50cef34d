/**
 * @module servers
 * `yard serve --http <port> --grpc <port>`: the workflow HTTP API (with
 * `/metrics` from `@switchyard/observability`) and the gRPC services over
 * one store, one workflow and one agent dispatcher (jobs run in this
 * process; remote agents join through gRPC's AgentService). And
 * `yard agent serve … -- <command>`: one terminal agent behind the agent
 * session server of `@switchyard/agent-session`.
 */
import type { AgentAdapter } from '@switchyard/workflow';
import { resolved } from '../config.js';
import { CliError } from '../errors.js';
import { watchCancellations } from '../jobWatch.js';
import { emit } from '../output.js';
import type { CommandContext } from '../program.js';
import { agentAdapters } from '../runtime.js';
import { intOption, withRuntime } from './shared.js';

/** `yard serve`: runs until SIGINT/SIGTERM (or stdin's stop signal in tests). */
export function serveCommand(ctx: CommandContext, opts: { http?: string; grpc?: string; host: string; agentCommand?: string }) {
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
    const obs = createObservability(
      { logging: { output: 'stderr', level: ctx.globals.verbose >= 2 ? 'debug' : ctx.globals.verbose ? 'info' : 'warn' } },
      { serviceName: 'yard' },
    );
    const detach = obs.observeWorkflow(rt.events);
    const hub = grpc ? new grpc.AgentHub({ clock: rt.workflow.clock }) : undefined;
    const adapters: AgentAdapter[] = [];
    if (opts.agentCommand !== undefined || rt.config.agent) {
      adapters.push(...agentAdapters(rt.config, opts.agentCommand !== undefined ? { command: opts.agentCommand } : {}));
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
        const server = await http.startWorkflowHttpServer({
          workflow: rt.workflow,
          sync,
          dispatchTool: tool,
          ...(dispatcher ? { dispatcher } : {}),
          ...(obs.registry ? { metrics: obs.registry } : {}),
          apiKeys: resolved(rt.config.api_keys),
          host: opts.host,
          port: httpPort,
        });
        closers.push(() => server.close());
        started.http = server.url;
      }
      if (grpc && grpcPort !== undefined) {
        const server = await grpc.startGrpcServer({
          workflow: rt.workflow,
          dispatchTool: tool,
          ...(hub ? { agentHub: hub } : {}),
          apiKeys: resolved(rt.config.api_keys),
          host: opts.host,
          port: grpcPort,
        });
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
    }
  });
}

/** `yard agent serve [--port 3284] [--type kind] [--transport pty|acp] [--api-key-env NAME] -- <command> [args…]`. */
export async function agentServeCommand(
  ctx: CommandContext,
  command: string[],
  opts: { port: string; host: string; type?: string; transport: 'pty' | 'acp'; allowedHost: string[]; apiKeyEnv?: string },
): Promise<number> {
  const [executable, ...args] = command;
  if (!executable) throw new CliError('invalid_argument', 'the agent command is required after --', { field: 'command' });
  const port = intOption(opts.port, '--port', { min: 0, max: 65535 })!;
  // The key comes from the environment, never the command line, where `ps` would show it to every user.
  const apiKey = opts.apiKeyEnv === undefined ? undefined : ctx.io.env[opts.apiKeyEnv];
  if (opts.apiKeyEnv !== undefined && !apiKey)
    throw new CliError('invalid_argument', `--api-key-env: environment variable ${opts.apiKeyEnv} is not set`, { field: 'api_key_env' });
  const { startAgentSessionServer } = await import('@switchyard/agent-session');
  const server = await startAgentSessionServer({
    host: opts.host,
    port,
    transport: opts.transport,
    command: executable,
    args,
    cwd: ctx.io.cwd,
    ...(opts.type !== undefined ? { agentType: opts.type } : {}),
    ...(opts.allowedHost.length ? { allowedHosts: opts.allowedHost } : {}),
    ...(apiKey ? { apiKey } : {}),
  });
  try {
    emit(
      ctx.io,
      ctx.globals.output,
      { url: server.url, command: executable, args, transport: opts.transport, api_key_required: apiKey !== undefined },
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
