/**
 * @module @switchyard/observability/events
 * The typed events observability listens to: the relay's (core-routing's
 * own types) and, declared structurally, the cooldown, health, healing,
 * credential, websocket and workflow events, with the `EventSource` shape
 * that emits them. For a host that names them when it wires its emitters
 * to `observeGateway` or `observeWorkflow`.
 *
 * @example
 * ```ts
 * import type { EventSource, RelayEvents } from '@switchyard/observability/events';
 * ```
 */

export type * from './events.js';
export { OBSERVER_METHODS } from './events.js';
