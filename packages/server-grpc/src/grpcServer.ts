/**
 * @module grpcServer
 * Starts `CoreService` and `AgentService` on one `@grpc/grpc-js` server,
 * with the standard health-checking service (`grpc.health.v1.Health`) and
 * server reflection on. Client keys (metadata `authorization: Bearer
 * <key>` or `x-api-key`) are compared in constant time; health and
 * reflection stay open, as load balancers and tools expect.
 *
 * Browsers cannot speak gRPC, so of the shared access policy only the key
 * and bind rules apply: a non-loopback bind without keys is refused unless
 * `insecure`, a key-less loopback server warns at start, and a key-less
 * server refuses calls a proxy forwarded (`x-forwarded-for`, `forwarded`,
 * `x-real-ip` metadata), since a proxy on this host would otherwise make
 * every client local.
 */
import { type Metadata, Server, ServerCredentials } from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import {
  ApiKeySet,
  assertSafeBind,
  type ClientKeyEntry,
  isLoopbackHost,
  openLoopbackWarning,
  rateLimitedWarning,
  untrustedForwardWarning,
} from '@switchyard/http-kit';
import type { DispatchTool, Workflow } from '@switchyard/workflow';
import { HealthImplementation } from 'grpc-health-check';
import type { AgentHub } from './agentHub.js';
import { agentServiceHandlers } from './agentService.js';
import { type Authorize, coreServiceHandlers } from './coreService.js';
import { GrpcServerError } from './grpcErrors.js';
import { AGENT_SERVICE, CORE_SERVICE, loadWorkflowProto } from './proto.js';

/** Options of {@link startGrpcServer}. */
export interface GrpcServerOptions {
  workflow: Workflow;
  /** The dispatch tool (`DispatchCommand`). */
  dispatchTool?: DispatchTool;
  /** Remote agents (`AgentService`); without it the service answers UNIMPLEMENTED. */
  agentHub?: AgentHub;
  /** Client keys (a key, or `{key, name, admin}`); without any, only loopback binds are allowed. */
  apiKeys?: readonly ClientKeyEntry[];
  /** Serve a non-loopback address without keys anyway (refused otherwise). */
  insecure?: boolean;
  /** Where start-up and access warnings go (default stderr): a key-less server, a forwarded call refused. */
  onWarning?: (message: string) => void;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Bytes a `StreamAgentEvents` reader may leave unread before its stream ends with RESOURCE_EXHAUSTED (default 4 MiB). */
  maxStreamBacklogBytes?: number;
}

/** A running server. */
export interface GrpcServer {
  /** `host:port`, as clients dial it. */
  address: string;
  port: number;
  health: HealthImplementation;
  close(): Promise<void>;
}

/** Metadata a proxy adds when it forwards someone else's call. */
const FORWARDING_METADATA = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const;

/**
 * An authorizer for a set of keys: timing-safe on SHA-256 digests, no early exit; the caller is the key's holder.
 * Without keys every caller is this machine's, so a call a proxy forwarded is refused, unless `remoteCallers`
 * (`insecure` on a public bind) serves anyone anyway.
 */
export function apiKeyAuthorizer(
  keys: readonly ClientKeyEntry[],
  options: { remoteCallers?: boolean; onForwarded?: (peer: string) => void } = {},
): Authorize {
  const set = new ApiKeySet(keys);
  return (call: { metadata: Metadata; getPeer?: () => string }) => {
    if (set.open) {
      if (options.remoteCallers || !FORWARDING_METADATA.some((name) => call.metadata.get(name).length > 0)) return undefined;
      options.onForwarded?.(call.getPeer?.() ?? 'an unknown peer');
      throw new GrpcServerError(
        'unauthenticated',
        'this server has no API key and serves this machine only; a call forwarded by a proxy (x-forwarded-for, forwarded or x-real-ip) needs a key: set api_keys',
      );
    }
    const authorization = call.metadata.get('authorization')[0];
    const bearer = typeof authorization === 'string' && /^bearer /i.test(authorization) ? authorization.slice(7).trim() : undefined;
    const header = call.metadata.get('x-api-key')[0];
    const key = bearer ?? (typeof header === 'string' ? header.trim() : undefined);
    if (!key) throw new GrpcServerError('unauthenticated', 'missing API key (metadata authorization: Bearer <key> or x-api-key)');
    const caller = set.identify(key);
    if (!caller) throw new GrpcServerError('unauthenticated', 'wrong API key');
    return caller;
  };
}

/**
 * Starts the server.
 *
 * @example
 * ```ts
 * const server = await startGrpcServer({ workflow, dispatchTool, port: 50051 });
 * // grpcurl -plaintext 127.0.0.1:50051 list
 * await server.close();
 * ```
 */
export async function startGrpcServer(options: GrpcServerOptions): Promise<GrpcServer> {
  const { definition, proto } = loadWorkflowProto();
  const host = options.host ?? '127.0.0.1';
  // Empty keys are no keys (ApiKeySet drops them): the bind rule and the authorizer agree on what is open.
  const keySet = new ApiKeySet(options.apiKeys ?? []);
  const hasKeys = !keySet.open;
  // A caller with an admin key acts under the key's name: that name may run admin-only operations.
  options.workflow.governance.admitAdmins(keySet.adminNames);
  // gRPC is out of a browser's reach, so Host and Origin do not apply; the key and bind rules do.
  assertSafeBind({
    host,
    hasKeys,
    insecure: options.insecure ?? false,
    server: 'the gRPC server',
    howToSetKey: 'set api_keys in .agileplus/config.yaml',
  });
  const onWarning = options.onWarning ?? ((message: string) => process.stderr.write(`warning: ${message}\n`));
  const warning = openLoopbackWarning({ host, hasKeys, server: 'the gRPC server' });
  if (warning) onWarning(warning);
  // Any client can send forwarding metadata: the log hears of it once a minute at most.
  const warnForwarded = rateLimitedWarning(onWarning);
  const authorize = apiKeyAuthorizer(options.apiKeys ?? [], {
    remoteCallers: options.insecure === true && !isLoopbackHost(host),
    onForwarded: (peer) => warnForwarded(untrustedForwardWarning(peer)),
  });
  const server = new Server();
  const v1 = proto.switchyard.workflow.v1;
  server.addService(
    v1.CoreService.service,
    coreServiceHandlers({
      workflow: options.workflow,
      authorize,
      ...(options.dispatchTool ? { dispatchTool: options.dispatchTool } : {}),
      ...(options.maxStreamBacklogBytes !== undefined ? { maxStreamBacklogBytes: options.maxStreamBacklogBytes } : {}),
    }),
  );
  if (options.agentHub) server.addService(v1.AgentService.service, agentServiceHandlers(options.agentHub, authorize));
  const health = new HealthImplementation({
    '': 'SERVING',
    [CORE_SERVICE]: 'SERVING',
    [AGENT_SERVICE]: options.agentHub ? 'SERVING' : 'NOT_SERVING',
  });
  health.addToServer(server);
  new ReflectionService(definition).addToServer(server);
  const bindHost = host.includes(':') ? `[${host}]` : host;
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${bindHost}:${options.port ?? 0}`, ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    address: `${bindHost}:${port}`,
    port,
    health,
    close: () =>
      new Promise<void>((resolve) => {
        for (const name of ['', CORE_SERVICE, AGENT_SERVICE]) health.setStatus(name, 'NOT_SERVING');
        options.agentHub?.close();
        // Finish calls in flight for a moment, then cut streams that would never end on their own.
        const timer = setTimeout(() => server.forceShutdown(), 2000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
