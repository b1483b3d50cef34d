/**
 * @module metricsServer
 * A plain `node:http` listener that serves Prometheus text on
 * `metrics.port` / `metrics.path`, apart from the data plane so a scrape
 * never queues behind client traffic (and the port can stay internal).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { ObservabilityError } from '../errors.js';

/** Options of {@link MetricsServer}. */
export interface MetricsServerOptions {
  /** One registry, or several merged at each scrape (gateway + workflow + process). */
  registries: Registry | Registry[];
  /** Default 9090; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default `/metrics`. */
  path?: string;
}

/**
 * Serves the registries at `path`: GET and HEAD answer 200 with the
 * exposition format, other methods 405, other paths 404.
 *
 * @example
 * ```ts
 * const server = new MetricsServer({ registries: metrics.registry, port: 9090 });
 * const { port } = await server.listen();
 * // curl http://127.0.0.1:9090/metrics
 * await server.close();
 * ```
 */
export class MetricsServer {
  private readonly registries: Registry[];
  private readonly port: number;
  private readonly host: string;
  private readonly path: string;
  private server: Server | undefined;

  constructor(options: MetricsServerOptions) {
    this.registries = Array.isArray(options.registries) ? options.registries : [options.registries];
    if (this.registries.length === 0) throw new ObservabilityError('invalid_argument', 'MetricsServer needs at least one registry');
    this.port = options.port ?? 9090;
    this.host = options.host ?? '127.0.0.1';
    this.path = options.path ?? '/metrics';
  }

  /** The exposition text of every registry, as one scrape returns it. */
  async render(): Promise<{ contentType: string; body: string }> {
    const registry = this.registries.length === 1 ? this.registries[0]! : Registry.merge(this.registries);
    return { contentType: registry.contentType, body: await registry.metrics() };
  }

  /** Starts listening; resolves with the bound address. */
  async listen(): Promise<AddressInfo> {
    if (this.server) return this.server.address() as AddressInfo;
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return server.address() as AddressInfo;
  }

  /** Stops listening and closes idle keep-alive connections. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== this.path) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return void res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
    }
    try {
      const { contentType, body } = await this.render();
      res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch {
      // A collect() callback failed; the scrape fails visibly without leaking internals.
      res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n');
    }
  }
}
