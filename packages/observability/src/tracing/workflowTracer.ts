/**
 * @module workflowTracer
 * Spans from workflow events: one per subcommand run (with its duration),
 * one per transition and gate failure, and one per agent job from its
 * first state to its terminal one.
 */
import { type Span, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import type {
  EventObserver,
  WorkflowAgentJobEvent,
  WorkflowGateFailedEvent,
  WorkflowSubcommandEvent,
  WorkflowTransitionEvent,
} from '../events.js';

const TERMINAL = new Set(['Completed', 'Failed', 'Cancelled']);

/**
 * Builds spans from workflow events.
 *
 * @example
 * ```ts
 * observeWorkflow(workflow.events, { tracing: createTracing(config.tracing).workflow });
 * ```
 */
export class WorkflowTracer implements EventObserver {
  private readonly jobs = new Map<string, Span>();

  constructor(
    private readonly tracer: Tracer,
    private readonly maxOpenJobs = 10_000,
  ) {}

  onWorkflowSubcommand(event: WorkflowSubcommandEvent): void {
    const span = this.tracer.startSpan(`yard ${event.command}`, {
      kind: SpanKind.INTERNAL,
      startTime: event.at - event.durationMs,
      attributes: { 'process.command': event.command, 'process.exit.code': event.exitCode },
    });
    if (event.exitCode !== 0) span.setStatus({ code: SpanStatusCode.ERROR, message: `exit code ${event.exitCode}` });
    span.end(event.at);
  }

  onWorkflowTransition(event: WorkflowTransitionEvent): void {
    const span = this.tracer.startSpan('workflow.transition', {
      startTime: event.at,
      attributes: {
        'workflow.feature': event.featureSlug,
        'workflow.from': event.from,
        'workflow.to': event.to,
        'workflow.actor': event.actor,
        ...(event.wpSequence !== null ? { 'workflow.wp': event.wpSequence } : {}),
      },
    });
    span.end(event.at);
  }

  onWorkflowGateFailed(event: WorkflowGateFailedEvent): void {
    const span = this.tracer.startSpan('workflow.gate', {
      startTime: event.at,
      attributes: {
        'workflow.feature': event.featureSlug,
        'workflow.transition': event.transition,
        'workflow.rule_ids': event.ruleIds,
        ...(event.wpSequence !== null ? { 'workflow.wp': event.wpSequence } : {}),
      },
    });
    span.setStatus({ code: SpanStatusCode.ERROR, message: `gate failed: ${event.ruleIds.join(', ')}` });
    span.end(event.at);
  }

  onWorkflowAgentJob(event: WorkflowAgentJobEvent): void {
    let span = this.jobs.get(event.jobId);
    if (!span) {
      if (TERMINAL.has(event.state)) return;
      span = this.tracer.startSpan('workflow.agent_job', { startTime: event.at, attributes: { 'workflow.job_id': event.jobId } });
      this.jobs.set(event.jobId, span);
      if (this.jobs.size > this.maxOpenJobs) {
        const oldest = this.jobs.keys().next().value!;
        this.jobs.get(oldest)?.end(event.at);
        this.jobs.delete(oldest);
      }
    }
    span.addEvent(event.state, event.at);
    if (!TERMINAL.has(event.state)) return;
    span.setAttribute('workflow.job_state', event.state);
    if (event.state === 'Failed') span.setStatus({ code: SpanStatusCode.ERROR, message: 'agent job failed' });
    span.end(event.at);
    this.jobs.delete(event.jobId);
  }
}
