/**
 * @module websocketMetrics
 * The gateway's websocket metrics: connections open now, upgrades by
 * outcome, and messages by direction and type. Messages are counted on the
 * hot path (a streamed response is one message per event), so they go
 * through {@link CounterCells}. Every label passes a {@link LabelLimiter}:
 * the routes and types are a small fixed set by construction, and the
 * limiter keeps them so should an emitter ever pass outside input.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import type { EventObserver, WebsocketCloseEvent, WebsocketMessageEvent, WebsocketOpenEvent, WebsocketRejectedEvent } from '../events.js';
import { type CounterCell, CounterCells } from './counterCells.js';
import { LabelLimiter } from './labelLimiter.js';

/** Options of {@link WebsocketMetrics}. */
export interface WebsocketMetricsOptions {
  registry?: Registry;
  /** Distinct values kept per label before folding into `other` (default 20: routes, outcomes and types are few). */
  maxLabelValues?: number;
}

/**
 * Websocket metrics, as an {@link EventObserver}.
 *
 * @example
 * ```ts
 * const metrics = new WebsocketMetrics();
 * metrics.onWebsocketOpen({ route: '/v1/responses', management: false, at: Date.now() });
 * await metrics.registry.metrics(); // svc_websocket_connections{route="/v1/responses"} 1 ...
 * ```
 */
export class WebsocketMetrics implements EventObserver {
  readonly registry: Registry;
  private readonly routes: LabelLimiter;
  private readonly outcomes: LabelLimiter;
  private readonly types: LabelLimiter;
  private readonly open = new Map<string, number>();
  private readonly upgrades: Counter<'route' | 'outcome'>;
  private readonly messageCells = new CounterCells<'route' | 'direction' | 'type'>();
  /** Cells by `route direction type` as the emitter passed them. */
  private readonly cells = new Map<string, CounterCell>();

  constructor(options: WebsocketMetricsOptions = {}) {
    const registry = (this.registry = options.registry ?? new Registry());
    const max = options.maxLabelValues ?? 20;
    this.routes = new LabelLimiter(max, ['/v1/ws', '/v1/responses', 'other']);
    this.outcomes = new LabelLimiter(max, ['accepted']);
    this.types = new LabelLimiter(max);
    const registers = [registry];
    const self = this;
    new Gauge({
      name: 'svc_websocket_connections',
      help: 'Websocket connections open now, by route.',
      labelNames: ['route'],
      registers,
      collect() {
        for (const [route, count] of self.open) this.set({ route }, count);
      },
    });
    this.upgrades = new Counter({
      name: 'svc_websocket_connections_total',
      help: 'Websocket upgrade requests by route and outcome (accepted, or why they were refused).',
      labelNames: ['route', 'outcome'],
      registers,
    });
    new Counter({
      name: 'svc_websocket_messages_total',
      help: 'Websocket messages by route, direction (in or out) and message type.',
      labelNames: ['route', 'direction', 'type'],
      registers,
      collect() {
        self.messageCells.flushInto(this);
      },
    });
  }

  onWebsocketOpen(event: WebsocketOpenEvent): void {
    const route = this.routes.fold(event.route);
    this.upgrades.inc({ route, outcome: 'accepted' });
    this.open.set(route, (this.open.get(route) ?? 0) + 1);
  }

  onWebsocketRejected(event: WebsocketRejectedEvent): void {
    this.upgrades.inc({ route: this.routes.fold(event.route), outcome: this.outcomes.fold(event.reason) });
  }

  onWebsocketClose(event: WebsocketCloseEvent): void {
    const route = this.routes.fold(event.route);
    this.open.set(route, Math.max(0, (this.open.get(route) ?? 0) - 1));
  }

  onWebsocketMessage(event: WebsocketMessageEvent): void {
    const key = `${event.route} ${event.direction} ${event.type}`;
    let cell = this.cells.get(key);
    if (!cell) {
      const labels = {
        route: this.routes.fold(event.route),
        direction: event.direction === 'in' ? 'in' : 'out',
        type: this.types.fold(event.type),
      };
      const folded = `${labels.route} ${labels.direction} ${labels.type}`;
      cell = this.cells.get(folded) ?? this.messageCells.create(labels);
      this.cells.set(folded, cell);
      // Raw names are cached only up to a bound: past it they cost a fold each time, never a new series.
      if (this.cells.size < 1000) this.cells.set(key, cell);
    }
    cell.value++;
  }
}
