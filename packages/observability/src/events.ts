/**
 * @module events
 * The event payloads this package listens to: the relay's are core-routing's
 * own types; the others are structural types, so it depends on the shape
 * of the cooldown manager's, the health monitor's, the credential pool's
 * and the workflow service's events, not on those packages. The emitters are eventemitter3 instances (a Node
 * `EventEmitter` fits too).
 */

// The relay's events are core-routing's own types (this package depends on it already).
import type { AttemptEndEvent, RequestEndEvent, RequestStartEvent } from '@switchyard/core-routing';

export type { AttemptEndEvent, RequestEndEvent, RequestStartEvent };

/** Why a key cools down. */
export type CooldownReason = 'rate_limit' | 'error' | 'manual';

/** `cooldown:start`, from the cooldown manager. */
export interface CooldownStartEvent {
  key: string;
  reason: CooldownReason;
  startedAt: number;
  endsAt: number;
}

/** `cooldown:end`, from the cooldown manager. */
export interface CooldownEndEvent {
  key: string;
  reason: CooldownReason;
  endedBy: 'expiry' | 'recover' | 'health_check';
  at: number;
}

/** `health:change`, from the health monitor. */
export interface HealthChangeEvent {
  provider: string;
  status: 'healthy' | 'unhealthy';
  previous: 'healthy' | 'unhealthy';
  at: number;
}

/** `health:check`, from the health monitor. */
export interface HealthCheckEvent {
  provider: string;
  ok: boolean;
  latencyMs: number;
  error?: string;
  at: number;
}

/** `healing:action`, from the self-healer: one healing action ran on a provider. */
export interface HealingActionEvent {
  provider: string;
  attempt: number;
  action: string;
  ok: boolean;
  error?: string;
  at: number;
}

/** `healing:outcome`, from the self-healer: the check after an attempt's actions, and what followed. */
export interface HealingOutcomeEvent {
  provider: string;
  attempt: number;
  /** `recovered`, `retrying`, `gave_up` or `cancelled`. */
  outcome: string;
  nextAttemptAt?: number;
  error?: string;
  at: number;
}

/** `credential:rotated`, from a credential pool. */
export interface CredentialRotatedEvent {
  provider: string;
  from: string | null;
  to: string;
  reason: 'exhausted' | 'expired' | 'rate_limited' | 'error' | 'disabled';
  /** Not in every emitter's payload; the observer's clock fills it in. */
  at?: number;
}

/** `quota:update`, from a credential pool. */
export interface QuotaUpdateEvent {
  provider: string;
  credentialId: string;
  limit: number | null;
  used: number;
  remaining: number | null;
}

/** `workflow:transition`. */
export interface WorkflowTransitionEvent {
  featureSlug: string;
  wpSequence: number | null;
  from: string;
  to: string;
  actor: string;
  at: number;
}

/** `workflow:gate_failed`. */
export interface WorkflowGateFailedEvent {
  featureSlug: string;
  wpSequence: number | null;
  transition: string;
  ruleIds: string[];
  at: number;
}

/** `workflow:subcommand`. */
export interface WorkflowSubcommandEvent {
  command: string;
  exitCode: number;
  durationMs: number;
  at: number;
}

/** States of a workflow agent job. */
export type AgentJobState = 'Pending' | 'Running' | 'Completed' | 'Failed' | 'Cancelled';

/** `workflow:agent_job`. */
export interface WorkflowAgentJobEvent {
  jobId: string;
  state: AgentJobState;
  at: number;
}

/**
 * `websocket:open`, from the gateway's websocket routes: a client completed
 * the upgrade. `route` is the path (`/v1/ws`, `/v1/responses`).
 */
export interface WebsocketOpenEvent {
  route: string;
  /** Whether the connection may send credential messages (it gave the management key). */
  management: boolean;
  at: number;
}

/** `websocket:rejected`: an upgrade refused before the handshake. */
export interface WebsocketRejectedEvent {
  /** The path asked for; anything but a websocket route is reported as `other`. */
  route: string;
  status: number;
  /** Why: `unauthorized`, `forbidden`, `locked_out`, `not_found`, `bad_request`, `shutting_down`, … */
  reason: string;
  at: number;
}

/** `websocket:close`: a connection ended. */
export interface WebsocketCloseEvent {
  route: string;
  /** The close code (1000 normal, 1001 going away, 1006 abnormal, 1009 message too big, …). */
  code: number;
  durationMs: number;
  messagesIn: number;
  messagesOut: number;
  at: number;
}

/** `websocket:message`: one message in or out. `type` is the message type, from a small fixed set. */
export interface WebsocketMessageEvent {
  route: string;
  direction: 'in' | 'out';
  type: string;
}

/** Events of the relay. */
export interface RelayEvents {
  'request:start': RequestStartEvent;
  'request:end': RequestEndEvent;
  'attempt:end': AttemptEndEvent;
}

/** Events of the cooldown manager. */
export interface CooldownEvents {
  'cooldown:start': CooldownStartEvent;
  'cooldown:end': CooldownEndEvent;
}

/** Events of the health monitor. */
export interface HealthEvents {
  'health:change': HealthChangeEvent;
  'health:check': HealthCheckEvent;
}

/** Events of the self-healer. */
export interface HealingEvents {
  'healing:action': HealingActionEvent;
  'healing:outcome': HealingOutcomeEvent;
}

/** Events of a credential pool. */
export interface CredentialEvents {
  'credential:rotated': CredentialRotatedEvent;
  'quota:update': QuotaUpdateEvent;
}

/** Events of the workflow service. */
export interface WorkflowEvents {
  'workflow:transition': WorkflowTransitionEvent;
  'workflow:gate_failed': WorkflowGateFailedEvent;
  'workflow:subcommand': WorkflowSubcommandEvent;
  'workflow:agent_job': WorkflowAgentJobEvent;
}

/** Events of the gateway's websocket routes. */
export interface WebsocketEvents {
  'websocket:open': WebsocketOpenEvent;
  'websocket:rejected': WebsocketRejectedEvent;
  'websocket:close': WebsocketCloseEvent;
  'websocket:message': WebsocketMessageEvent;
}

/** Every event this package understands. */
export type ObservedEvents = RelayEvents &
  CooldownEvents &
  HealthEvents &
  HealingEvents &
  CredentialEvents &
  WorkflowEvents &
  WebsocketEvents;

/**
 * The part of an emitter the observers use: `on` and `off`. Both
 * eventemitter3 and `node:events` emitters fit. Listener parameters are
 * loosely typed here because eventemitter3's typed `on` does not accept a
 * wider listener type structurally.
 */
export interface EventSource {
  // biome-ignore lint/suspicious/noExplicitAny: structural fit for eventemitter3's generic signatures.
  on(event: any, listener: (...args: any[]) => void): unknown;
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  off(event: any, listener: (...args: any[]) => void): unknown;
}

/**
 * A consumer of events: a metrics registry, a request logger, the alert
 * signal store, a tracer. Each method is optional; `observeGateway` and
 * `observeWorkflow` call the ones present, each inside its own try/catch, so
 * a faulty consumer never throws into the emitter (the relay's hot path).
 */
export interface EventObserver {
  onRequestStart?(event: RequestStartEvent): void;
  onRequestEnd?(event: RequestEndEvent): void;
  onAttemptEnd?(event: AttemptEndEvent): void;
  onCooldownStart?(event: CooldownStartEvent): void;
  onCooldownEnd?(event: CooldownEndEvent): void;
  onHealthChange?(event: HealthChangeEvent): void;
  onHealthCheck?(event: HealthCheckEvent): void;
  onHealingAction?(event: HealingActionEvent): void;
  onHealingOutcome?(event: HealingOutcomeEvent): void;
  onCredentialRotated?(event: CredentialRotatedEvent): void;
  onQuotaUpdate?(event: QuotaUpdateEvent): void;
  onWorkflowTransition?(event: WorkflowTransitionEvent): void;
  onWorkflowGateFailed?(event: WorkflowGateFailedEvent): void;
  onWorkflowSubcommand?(event: WorkflowSubcommandEvent): void;
  onWorkflowAgentJob?(event: WorkflowAgentJobEvent): void;
  onWebsocketOpen?(event: WebsocketOpenEvent): void;
  onWebsocketRejected?(event: WebsocketRejectedEvent): void;
  onWebsocketClose?(event: WebsocketCloseEvent): void;
  onWebsocketMessage?(event: WebsocketMessageEvent): void;
}

/** Which observer method handles which event. */
export const OBSERVER_METHODS = {
  'request:start': 'onRequestStart',
  'request:end': 'onRequestEnd',
  'attempt:end': 'onAttemptEnd',
  'cooldown:start': 'onCooldownStart',
  'cooldown:end': 'onCooldownEnd',
  'health:change': 'onHealthChange',
  'health:check': 'onHealthCheck',
  'healing:action': 'onHealingAction',
  'healing:outcome': 'onHealingOutcome',
  'credential:rotated': 'onCredentialRotated',
  'quota:update': 'onQuotaUpdate',
  'workflow:transition': 'onWorkflowTransition',
  'workflow:gate_failed': 'onWorkflowGateFailed',
  'workflow:subcommand': 'onWorkflowSubcommand',
  'workflow:agent_job': 'onWorkflowAgentJob',
  'websocket:open': 'onWebsocketOpen',
  'websocket:rejected': 'onWebsocketRejected',
  'websocket:close': 'onWebsocketClose',
  'websocket:message': 'onWebsocketMessage',
} as const satisfies Record<keyof ObservedEvents, keyof EventObserver>;
