/**
 * @module eventLog
 * Turns events into log lines. Each finished client request is one line,
 * `request_success`, `request_failed` or (the client left first, at `info`)
 * `request_client_closed`, with `provider`, `model`,
 * `request_id`, `latency_ms` and `tokens{input,output}`; cooldowns, health
 * changes, rotations and workflow events get a line each too. Attempt lines
 * are debug-level and skipped before any work when debug is off.
 */
import type { Logger } from 'pino';
import type {
  AttemptEndEvent,
  CooldownEndEvent,
  CooldownStartEvent,
  CredentialRotatedEvent,
  EventObserver,
  HealingActionEvent,
  HealingOutcomeEvent,
  HealthChangeEvent,
  RequestEndEvent,
  WebsocketCloseEvent,
  WebsocketOpenEvent,
  WebsocketRejectedEvent,
  WorkflowAgentJobEvent,
  WorkflowGateFailedEvent,
  WorkflowSubcommandEvent,
  WorkflowTransitionEvent,
} from '../events.js';
import { type LineWriter, lineWriterOf } from './lineWriter.js';

/** The most characters of a client-supplied string put into a log line. */
export const MAX_LOGGED_FIELD = 256;

/**
 * A string field as logged: at most {@link MAX_LOGGED_FIELD} characters,
 * marked when cut. Model names, request ids and the like come from clients;
 * the log must not be where a client's megabyte ends up, once per request.
 */
function capped<T extends string | null>(value: T): T {
  if (value === null || value.length <= MAX_LOGGED_FIELD) return value;
  return `${value.slice(0, MAX_LOGGED_FIELD)}…(${value.length} chars)` as T;
}

/** A string, number, boolean or null as JSON, as pino writes it (a number that is not finite as null). */
function json(value: string | number | boolean | null): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

/**
 * The request line from a template: the same members, in the same order, as the object
 * {@link EventLog.onRequestEnd} gives pino otherwise (`lineWriter.test.ts` holds the two equal).
 */
function writeRequestLine(lines: LineWriter, logger: Logger, event: RequestEndEvent): void {
  const level = event.outcome !== 'error' ? 'info' : event.httpStatus >= 400 && event.httpStatus < 500 ? 'warn' : 'error';
  // A line the level drops is not built (at `warn`, no successful request writes one).
  if (!logger.isLevelEnabled(level)) return;
  let fields =
    `,"request_id":${json(capped(event.requestId))},"provider":${json(capped(event.provider))}` +
    `,"model":${json(capped(event.model))},"latency_ms":${json(event.latencyMs)},"ttfb_ms":${json(event.ttfbMs)}` +
    `,"tokens":{"input":${json(event.tokens.input)},"output":${json(event.tokens.output)}}` +
    `,"http_status":${json(event.httpStatus)},"attempts":${json(event.attempts)},"cached":${json(event.cached)}` +
    `,"credential_id":${json(capped(event.credentialId))}`;
  if (event.outcome === 'success') lines.write(level, fields, 'request_success');
  else if (event.outcome === 'client_closed') lines.write(level, fields, 'request_client_closed');
  else {
    fields += `,"error_type":${json(event.errorType)}`;
    lines.write(level, fields, 'request_failed');
  }
}

/**
 * Logs events as JSON lines, as an {@link EventObserver}.
 *
 * @example
 * ```ts
 * const log = new EventLog(logger);
 * log.onRequestEnd(event); // {"level":"info","timestamp":"…","msg":"request_success","provider":"openai",…}
 * ```
 */
export class EventLog implements EventObserver {
  /** Writes the request line from a template when the logger allows it (see {@link lineWriterOf}). */
  private readonly lines: LineWriter | undefined;

  constructor(private readonly logger: Logger) {
    this.lines = lineWriterOf(logger);
  }

  onRequestEnd(event: RequestEndEvent): void {
    if (this.lines) {
      writeRequestLine(this.lines, this.logger, event);
      return;
    }
    const line = {
      request_id: capped(event.requestId),
      provider: capped(event.provider),
      model: capped(event.model),
      latency_ms: event.latencyMs,
      ttfb_ms: event.ttfbMs,
      tokens: { input: event.tokens.input, output: event.tokens.output },
      http_status: event.httpStatus,
      attempts: event.attempts,
      cached: event.cached,
      credential_id: capped(event.credentialId),
    };
    if (event.outcome === 'success') {
      this.logger.info(line, 'request_success');
      return;
    }
    if (event.outcome === 'client_closed') {
      // The client went away (a "stop" button): worth a line, not an error of anyone's here.
      this.logger.info(line, 'request_client_closed');
      return;
    }
    const failed = { ...line, error_type: event.errorType };
    // A 4xx is the client's or the quota's story; a 5xx (or no status) is ours.
    if (event.httpStatus >= 400 && event.httpStatus < 500) this.logger.warn(failed, 'request_failed');
    else this.logger.error(failed, 'request_failed');
  }

  onAttemptEnd(event: AttemptEndEvent): void {
    if (!this.logger.isLevelEnabled('debug')) return;
    this.logger.debug(
      {
        request_id: capped(event.requestId),
        provider: capped(event.provider),
        credential_id: capped(event.credentialId),
        attempt: event.attempt,
        outcome: event.outcome,
        http_status: event.httpStatus,
        error_type: event.errorType,
        latency_ms: event.latencyMs,
      },
      'upstream_attempt',
    );
  }

  onHealingAction(event: HealingActionEvent): void {
    const line = { provider: event.provider, attempt: event.attempt, action: event.action, ok: event.ok, error: event.error ?? null };
    if (event.ok) this.logger.info(line, 'self_healing_action');
    else this.logger.warn(line, 'self_healing_action');
  }

  onHealingOutcome(event: HealingOutcomeEvent): void {
    const line = {
      provider: event.provider,
      attempt: event.attempt,
      outcome: event.outcome,
      error: event.error ?? null,
      next_attempt_at: event.nextAttemptAt === undefined ? null : new Date(event.nextAttemptAt).toISOString(),
    };
    if (event.outcome === 'gave_up') this.logger.error(line, 'self_healing_check');
    else this.logger.info(line, 'self_healing_check');
  }

  onCooldownStart(event: CooldownStartEvent): void {
    this.logger.warn(
      { key: event.key, reason: event.reason, ends_at: new Date(event.endsAt).toISOString(), duration_ms: event.endsAt - event.startedAt },
      'cooldown_started',
    );
  }

  onCooldownEnd(event: CooldownEndEvent): void {
    this.logger.info({ key: event.key, reason: event.reason, ended_by: event.endedBy }, 'cooldown_ended');
  }

  onHealthChange(event: HealthChangeEvent): void {
    if (event.status === 'unhealthy') this.logger.error({ provider: event.provider, previous: event.previous }, 'provider_unhealthy');
    else this.logger.info({ provider: event.provider, previous: event.previous }, 'provider_healthy');
  }

  onCredentialRotated(event: CredentialRotatedEvent): void {
    this.logger.info({ provider: event.provider, from: event.from, to: event.to, reason: event.reason }, 'credential_rotated');
  }

  onWorkflowTransition(event: WorkflowTransitionEvent): void {
    this.logger.info(
      { feature: event.featureSlug, wp: event.wpSequence, from: event.from, to: event.to, actor: event.actor },
      'workflow_transition',
    );
  }

  onWorkflowGateFailed(event: WorkflowGateFailedEvent): void {
    this.logger.warn(
      { feature: event.featureSlug, wp: event.wpSequence, transition: event.transition, rule_ids: event.ruleIds },
      'workflow_gate_failed',
    );
  }

  onWorkflowSubcommand(event: WorkflowSubcommandEvent): void {
    const line = { command: event.command, exit_code: event.exitCode, duration_ms: event.durationMs };
    if (event.exitCode === 0) this.logger.info(line, 'workflow_subcommand');
    else this.logger.warn(line, 'workflow_subcommand');
  }

  onWebsocketOpen(event: WebsocketOpenEvent): void {
    this.logger.info({ route: event.route, management: event.management }, 'websocket_opened');
  }

  onWebsocketRejected(event: WebsocketRejectedEvent): void {
    this.logger.warn({ route: event.route, status: event.status, reason: event.reason }, 'websocket_rejected');
  }

  onWebsocketClose(event: WebsocketCloseEvent): void {
    this.logger.info(
      {
        route: event.route,
        code: event.code,
        duration_ms: event.durationMs,
        messages_in: event.messagesIn,
        messages_out: event.messagesOut,
      },
      'websocket_closed',
    );
  }

  onWorkflowAgentJob(event: WorkflowAgentJobEvent): void {
    const line = { job_id: event.jobId, state: event.state };
    if (event.state === 'Failed') this.logger.warn(line, 'workflow_agent_job');
    else this.logger.info(line, 'workflow_agent_job');
  }
}
