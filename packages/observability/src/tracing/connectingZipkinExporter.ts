/**
 * @module connectingZipkinExporter
 * The Zipkin exporter, connecting through a `lookup` of the caller's.
 * OpenTelemetry's `ZipkinExporter` posts with Node's global agent and takes
 * no agent or lookup option, so a caller that must vet the collector's
 * addresses at each connection (the gateway's DNS-rebinding guard) could not
 * reach its connections. This subclass keeps the exporter's conversion to
 * Zipkin v2 JSON and its bookkeeping, and replaces only its send function
 * (the internal `_send`, one POST of converted spans) with one that posts
 * through an agent built with that lookup. Should a release of the exporter
 * drop `_send`, construction fails: exporting unguarded would be worse than
 * not exporting.
 */
import type { lookup as dnsLookup } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { type ExporterConfig, ZipkinExporter } from '@opentelemetry/exporter-zipkin';
import { ObservabilityError } from '../errors.js';

/** The shape of the exporter's internal send: converted spans in, one result out. */
type Send = (spans: unknown[], done: (result: ExportResult) => void) => void;

/** Options of {@link ConnectingZipkinExporter}: the exporter's own, with the collector's URL required. */
export interface ConnectingZipkinOptions extends ExporterConfig {
  url: string;
  /** Resolves the collector's host at each new connection (`dns.lookup`'s shape); its errors fail the export. */
  lookup: typeof dnsLookup;
}

/** One POST of spans, answered as the stock exporter answers: below 400 is success, anything else a failure. */
function postSpans(url: URL, headers: Record<string, string>, agent: HttpAgent): Send {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return (spans, done) => {
    if (spans.length === 0) return done({ code: ExportResultCode.SUCCESS });
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } });
    req.once('response', (res: IncomingMessage) => {
      res.resume();
      res.once('end', () => {
        const status = res.statusCode ?? 0;
        done(
          status < 400
            ? { code: ExportResultCode.SUCCESS }
            : { code: ExportResultCode.FAILED, error: new Error(`Got unexpected status code from zipkin: ${status}`) },
        );
      });
    });
    req.once('error', (error) => done({ code: ExportResultCode.FAILED, error }));
    req.end(JSON.stringify(spans));
  };
}

/**
 * A `ZipkinExporter` whose connections resolve the collector's host with `lookup`.
 *
 * @example
 * ```ts
 * const exporter = new ConnectingZipkinExporter({ url: 'http://zipkin.internal:9411/api/v2/spans', lookup: dns.lookup });
 * ```
 */
export class ConnectingZipkinExporter extends ZipkinExporter {
  private readonly agent: HttpAgent;

  constructor(options: ConnectingZipkinOptions) {
    const { lookup, ...config } = options;
    super(config);
    const url = new URL(config.url);
    this.agent = url.protocol === 'https:' ? new HttpsAgent({ keepAlive: true, lookup }) : new HttpAgent({ keepAlive: true, lookup });
    const internals = this as unknown as { _send?: Send };
    if (typeof internals._send !== 'function') {
      throw new ObservabilityError(
        'missing_dependency',
        'this release of @opentelemetry/exporter-zipkin cannot connect through a lookup of ours; use the otlp exporter',
      );
    }
    internals._send = postSpans(url, config.headers ?? {}, this.agent);
  }

  override async shutdown(): Promise<void> {
    await super.shutdown();
    this.agent.destroy();
  }
}
