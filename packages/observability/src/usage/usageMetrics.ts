/**
 * @module usageMetrics
 * Prometheus counters of usage by tenant and by client key, with bounded
 * labels: tenants past `maxTenantLabels` and keys past `maxKeyLabels` fold
 * into `other` (a key label per key would otherwise grow the scrape with
 * every key issued). New metrics of their own: the specification's svc_*
 * metrics keep their label sets. Counting is a field increment on cells the
 * registry reads at scrape time, as in `GatewayMetrics`.
 */
import { Counter, Registry } from 'prom-client';
import { CounterCells, type RequestCells } from '../metrics/counterCells.js';
import { LabelLimiter } from '../metrics/labelLimiter.js';
import type { CountedRequest } from './usageRecorder.js';

/** Options of {@link UsageMetrics}. */
export interface UsageMetricsOptions {
  /** Registry to register on (a fresh one by default; never prom-client's global). */
  registry?: Registry;
  /** Distinct tenants labelled before the rest fold into `other` (default 100). */
  maxTenantLabels?: number;
  /** Distinct client keys labelled before the rest fold into `other` (default 100; `usage.metrics.max_key_labels`). */
  maxKeyLabels?: number;
}

/** The cells of one label value (a tenant or a key). */
type Cells = RequestCells;

/** One family of counters (per tenant, or per key) under one label name. */
class LabelledUsage<L extends string> {
  private readonly requests = new CounterCells<L | 'status'>();
  private readonly tokens = new CounterCells<L | 'type'>();
  private readonly cacheHits = new CounterCells<L>();
  private readonly cost = new CounterCells<L>();
  private readonly byValue = new Map<string, Cells>();

  constructor(
    private readonly label: L,
    private readonly limiter: LabelLimiter,
    registry: Registry,
    prefix: string,
    who: string,
  ) {
    const self = this;
    const registers = [registry];
    new Counter({
      name: `${prefix}_requests_total`,
      help: `Client requests that ended, by ${who} and status (success, error, or client_closed).`,
      labelNames: [label, 'status'],
      registers,
      collect() {
        self.requests.flushInto(this);
      },
    });
    new Counter({
      name: `${prefix}_tokens_total`,
      help: `Tokens by ${who} and type (input or output).`,
      labelNames: [label, 'type'],
      registers,
      collect() {
        self.tokens.flushInto(this);
      },
    });
    new Counter({
      name: `${prefix}_cache_hits_total`,
      help: `Client requests answered from the response cache, by ${who}.`,
      labelNames: [label],
      registers,
      collect() {
        self.cacheHits.flushInto(this);
      },
    });
    new Counter({
      name: `${prefix}_cost_total`,
      help: `Cost of the tokens used, by ${who}: tokens / 1000 x providers.<p>.cost_per_1k_tokens, in the prices' currency.`,
      labelNames: [label],
      registers,
      collect() {
        self.cost.flushInto(this);
      },
    });
  }

  count(raw: string, request: CountedRequest): void {
    const cells = this.cells(raw);
    if (request.outcome === 'success') cells.success.value++;
    else if (request.outcome === 'error') cells.error.value++;
    else cells.clientClosed.value++;
    if (request.tokens.input > 0) cells.tokensIn.value += request.tokens.input;
    if (request.tokens.output > 0) cells.tokensOut.value += request.tokens.output;
    if (request.cached) cells.cacheHits.value++;
    if (request.cost > 0) cells.cost.value += request.cost;
  }

  /** The cells of a raw value, folding it only when first seen (raw names cached up to 4× the limit). */
  private cells(raw: string): Cells {
    let cells = this.byValue.get(raw);
    if (cells) return cells;
    const value = this.limiter.fold(raw);
    cells = this.byValue.get(value);
    if (!cells) {
      const at = { [this.label]: value } as Record<L, string>;
      cells = {
        success: this.requests.create({ ...at, status: 'success' }),
        error: this.requests.create({ ...at, status: 'error' }),
        clientClosed: this.requests.create({ ...at, status: 'client_closed' }),
        tokensIn: this.tokens.create({ ...at, type: 'input' }),
        tokensOut: this.tokens.create({ ...at, type: 'output' }),
        cacheHits: this.cacheHits.create(at),
        cost: this.cost.create(at),
      };
      this.byValue.set(value, cells);
    }
    if (this.byValue.size < this.limiter.max * 4) this.byValue.set(raw, cells);
    return cells;
  }
}

/**
 * `svc_tenant_*` and `svc_client_key_*` counters.
 *
 * @example
 * ```ts
 * const metrics = new UsageMetrics({ registry, maxKeyLabels: 100 });
 * const recorder = new UsageRecorder({ store, onCounted: (request) => metrics.count(request) });
 * ```
 */
export class UsageMetrics {
  readonly registry: Registry;
  private readonly tenants: LabelledUsage<'tenant'>;
  private readonly keys: LabelledUsage<'key'>;
  private readonly tenantLimiter: LabelLimiter;
  private readonly keyLimiter: LabelLimiter;

  constructor(options: UsageMetricsOptions) {
    this.tenantLimiter = new LabelLimiter(options.maxTenantLabels ?? 100, ['default']);
    this.keyLimiter = new LabelLimiter(options.maxKeyLabels ?? 100);
    const registry = (this.registry = options.registry ?? new Registry());
    this.tenants = new LabelledUsage('tenant', this.tenantLimiter, registry, 'svc_tenant', 'tenant');
    this.keys = new LabelledUsage('key', this.keyLimiter, registry, 'svc_client_key', 'client key id');
  }

  /** Counts one request (the recorder's `onCounted`). */
  count(request: CountedRequest): void {
    this.tenants.count(request.client.tenant, request);
    this.keys.count(request.client.keyId, request);
  }

  /** Values folded into `other` so far (a hint that a limit is too low). */
  foldedLabels(): { tenant: number; key: number } {
    return { tenant: this.tenantLimiter.folded, key: this.keyLimiter.folded };
  }
}
