/**
 * @module workflowMetrics
 * The workflow service's svc_workflow_* metrics (what `yard serve` shows on
 * /metrics): state transitions, governance gate failures, subcommand
 * invocations by exit code, and agent jobs by state.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type {
  AgentJobState,
  EventObserver,
  WorkflowAgentJobEvent,
  WorkflowGateFailedEvent,
  WorkflowSubcommandEvent,
  WorkflowTransitionEvent,
} from '../events.js';
import { LabelLimiter } from './labelLimiter.js';

/** Options of {@link WorkflowMetrics}. */
export interface WorkflowMetricsOptions {
  registry?: Registry;
  /** Distinct values kept per bounded label (states, transitions, commands, rule ids); default 100. */
  maxLabelValues?: number;
  /** Jobs tracked for the current-state gauge at most; the oldest are forgotten past it (default 100,000). */
  maxTrackedJobs?: number;
}

const AGENT_JOB_STATES: readonly AgentJobState[] = ['Pending', 'Running', 'Completed', 'Failed', 'Cancelled'];
const TERMINAL: ReadonlySet<AgentJobState> = new Set(['Completed', 'Failed', 'Cancelled']);

/**
 * The workflow service's metrics, as an {@link EventObserver}.
 *
 * @example
 * ```ts
 * const metrics = new WorkflowMetrics();
 * metrics.onWorkflowSubcommand({ command: 'feature create', exitCode: 0, durationMs: 42, at: Date.now() });
 * await metrics.registry.metrics(); // svc_workflow_subcommands_total{command="feature create",exit_code="0"} 1
 * ```
 */
export class WorkflowMetrics implements EventObserver {
  readonly registry: Registry;
  private readonly states: LabelLimiter;
  private readonly transitionNames: LabelLimiter;
  private readonly commands: LabelLimiter;
  private readonly rules: LabelLimiter;
  private readonly maxTrackedJobs: number;
  /** Jobs not yet in a terminal state, by id. */
  private readonly openJobs = new Map<string, AgentJobState>();

  private readonly transitions: Counter<'from' | 'to'>;
  private readonly gateFailures: Counter<'transition'>;
  private readonly ruleFailures: Counter<'rule'>;
  private readonly subcommands: Counter<'command' | 'exit_code'>;
  private readonly subcommandDuration: Histogram<'command'>;
  private readonly agentJobs: Counter<'state'>;

  constructor(options: WorkflowMetricsOptions = {}) {
    const registry = (this.registry = options.registry ?? new Registry());
    const max = options.maxLabelValues ?? 100;
    this.states = new LabelLimiter(max);
    this.transitionNames = new LabelLimiter(max);
    this.commands = new LabelLimiter(max);
    this.rules = new LabelLimiter(max);
    this.maxTrackedJobs = options.maxTrackedJobs ?? 100_000;
    const registers = [registry];
    const self = this;
    this.transitions = new Counter({
      name: 'svc_workflow_transitions_total',
      help: 'Feature and work-package state transitions, by from and to state.',
      labelNames: ['from', 'to'],
      registers,
    });
    this.gateFailures = new Counter({
      name: 'svc_workflow_gate_failures_total',
      help: 'Transitions refused by a governance gate, by transition.',
      labelNames: ['transition'],
      registers,
    });
    this.ruleFailures = new Counter({
      name: 'svc_workflow_gate_rule_failures_total',
      help: 'Governance rules that failed, by rule id (one gate failure may fail several).',
      labelNames: ['rule'],
      registers,
    });
    this.subcommands = new Counter({
      name: 'svc_workflow_subcommands_total',
      help: 'Subcommand invocations by command and exit code.',
      labelNames: ['command', 'exit_code'],
      registers,
    });
    this.subcommandDuration = new Histogram({
      name: 'svc_workflow_subcommand_duration_seconds',
      help: 'Subcommand run time in seconds, by command.',
      labelNames: ['command'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
      registers,
    });
    this.agentJobs = new Counter({
      name: 'svc_workflow_agent_jobs_total',
      help: 'Agent jobs entering each state.',
      labelNames: ['state'],
      registers,
    });
    new Gauge({
      name: 'svc_workflow_agent_jobs',
      help: 'Agent jobs currently Pending or Running.',
      labelNames: ['state'],
      registers,
      collect() {
        let pending = 0;
        let running = 0;
        for (const state of self.openJobs.values()) {
          if (state === 'Pending') pending++;
          else if (state === 'Running') running++;
        }
        this.set({ state: 'Pending' }, pending);
        this.set({ state: 'Running' }, running);
      },
    });
    for (const state of AGENT_JOB_STATES) this.agentJobs.inc({ state }, 0);
  }

  onWorkflowTransition(event: WorkflowTransitionEvent): void {
    this.transitions.inc({ from: this.states.fold(event.from), to: this.states.fold(event.to) });
  }

  onWorkflowGateFailed(event: WorkflowGateFailedEvent): void {
    this.gateFailures.inc({ transition: this.transitionNames.fold(event.transition) });
    for (const rule of event.ruleIds) this.ruleFailures.inc({ rule: this.rules.fold(rule) });
  }

  onWorkflowSubcommand(event: WorkflowSubcommandEvent): void {
    const command = this.commands.fold(event.command);
    // Exit codes are 0-255 by construction; anything else is folded.
    const exitCode = Number.isInteger(event.exitCode) && event.exitCode >= 0 && event.exitCode <= 255 ? String(event.exitCode) : 'other';
    this.subcommands.inc({ command, exit_code: exitCode });
    this.subcommandDuration.observe({ command }, event.durationMs / 1000);
  }

  onWorkflowAgentJob(event: WorkflowAgentJobEvent): void {
    if (!AGENT_JOB_STATES.includes(event.state)) return;
    this.agentJobs.inc({ state: event.state });
    if (TERMINAL.has(event.state)) {
      this.openJobs.delete(event.jobId);
      return;
    }
    this.openJobs.delete(event.jobId); // re-insert: keeps Map order = recency
    this.openJobs.set(event.jobId, event.state);
    if (this.openJobs.size > this.maxTrackedJobs) this.openJobs.delete(this.openJobs.keys().next().value!);
  }
}
