/**
 * @module workflowServer
 * Serves the workflow API on node:http through `@hono/node-server`, with
 * `Expect: 100-continue` answered by the API's own checks.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { assertSafeBind, continueWhenBodyIsRead, isLoopbackHost, openLoopbackWarning } from '@switchyard/http-kit';
import { createWorkflowApi, type WorkflowApiOptions } from './workflowApi.js';

/** Options of {@link startWorkflowHttpServer}. */
export interface WorkflowHttpServerOptions extends WorkflowApiOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Serve a non-loopback address without API keys anyway (refused otherwise). */
  insecure?: boolean;
}

/** A running server. */
export interface WorkflowHttpServer {
  url: string;
  port: number;
  /** The API it serves (embedders and tests call it without a socket). */
  app: OpenAPIHono;
  close(): Promise<void>;
}

/**
 * Starts the workflow API.
 *
 * @example
 * ```ts
 * const server = await startWorkflowHttpServer({ workflow, port: 8080 });
 * console.log(`${server.url}/openapi.json`);
 * await server.close();
 * ```
 */
export async function startWorkflowHttpServer(options: WorkflowHttpServerOptions): Promise<WorkflowHttpServer> {
  const host = options.host ?? '127.0.0.1';
  const hasKeys = (options.apiKeys ?? []).length > 0;
  assertSafeBind({
    host,
    hasKeys,
    insecure: options.insecure ?? false,
    server: 'the workflow API',
    howToSetKey: 'set api_keys in .agileplus/config.yaml',
  });
  const onWarning = options.onWarning ?? ((message: string) => process.stderr.write(`warning: ${message}\n`));
  const warning = openLoopbackWarning({ host, hasKeys, server: 'the workflow API' });
  if (warning) onWarning(warning);
  // The one way round the bind rule serves what it says: callers on other machines, without a key.
  const remoteCallers = options.insecure === true && !hasKeys && !isLoopbackHost(host);
  const app = createWorkflowApi({ ...options, onWarning, remoteCallers, access: { bindHost: host, ...options.access } });
  const server = serve({ fetch: app.fetch, hostname: host, port: options.port ?? 0 }) as Server;
  // `Expect: 100-continue` gets its 100 only once a route reads the body: a wrong key or a declared
  // length over the cap is refused before the client uploads.
  continueWhenBodyIsRead(server);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    app,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
