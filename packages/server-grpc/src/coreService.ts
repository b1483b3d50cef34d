/**
 * @module coreService
 * `CoreService` handlers: each translates a request into one workflow call
 * and its result into the wire message; errors become gRPC statuses
 * through one table (grpcErrors). Two calls stream: `GetAuditTrail` reads
 * the chain entry by entry, and `StreamAgentEvents` streams the agent
 * events the workflow store holds, whichever process ran the job.
 */
import type { ServerUnaryCall, ServerWritableStream, sendUnaryData } from '@grpc/grpc-js';
import {
  type AgentEvent,
  type AuditTrailEntry,
  type DispatchTool,
  FEATURE_COMMANDS,
  FEATURE_STATES,
  InvalidArgumentError,
  type Workflow,
  WorkflowError,
  type WorkPackage,
} from '@switchyard/workflow';
import { effectiveDependencies, parseInput, slugSchema } from '@switchyard/workflow/domain';
import type { AgentEvent as AgentEventMsg } from './generated/switchyard/workflow/v1/AgentEvent.js';
import type { AuditEntry as AuditEntryMsg } from './generated/switchyard/workflow/v1/AuditEntry.js';
import type { CoreServiceHandlers } from './generated/switchyard/workflow/v1/CoreService.js';
import type { WorkPackage as WorkPackageMsg } from './generated/switchyard/workflow/v1/WorkPackage.js';
import { echoed, failStream, GrpcServerError, toServiceError } from './grpcErrors.js';
import { fromStruct, toStruct, toValue } from './struct.js';

/** The holder of the key a call presented: its name is the actor the call is recorded under. */
export interface Caller {
  name: string;
  admin: boolean;
}

/** Checks a call's credentials (throws `unauthenticated`); returns who called, or undefined on a key-less server. */
export type Authorize = (call: { metadata: import('@grpc/grpc-js').Metadata; getPeer?: () => string }) => Caller | undefined;

/** Wraps an async handler: credentials first, then the result or the mapped error. */
export function unary<Req, Res>(authorize: Authorize, fn: (request: Req, caller: Caller | undefined) => Promise<Res>) {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
    Promise.resolve()
      .then(() => authorize(call))
      .then((caller) => fn(call.request, caller ?? undefined))
      .then(
        (result) => callback(null, result),
        (error: unknown) => callback(toServiceError(error)),
      );
  };
}

const FINAL_JOB_STATES = new Set(['Completed', 'Failed', 'Cancelled']);

export function workPackageMessage(wp: WorkPackage): WorkPackageMsg {
  const { agent_id, pr_url, ...rest } = wp;
  return { ...rest, ...(agent_id !== null ? { agent_id } : {}), ...(pr_url !== null ? { pr_url } : {}) };
}

export function auditEntryMessage(entry: AuditTrailEntry): AuditEntryMsg {
  return {
    id: entry.id,
    feature_slug: entry.feature_slug ?? '',
    ...(entry.wp_sequence !== null ? { wp_sequence: entry.wp_sequence } : {}),
    timestamp: entry.timestamp,
    actor: entry.actor,
    transition: entry.transition,
    evidence_refs: entry.evidence_refs,
    action: entry.action,
    prev_hash: entry.prev_hash,
    hash: entry.hash,
    forced: entry.forced === true,
    detail: toStruct(entry.detail ?? {}),
  };
}

function agentEventMessage(event: AgentEvent): AgentEventMsg {
  return {
    id: event.id ?? 0,
    job_id: event.jobId,
    feature_slug: event.featureSlug,
    wp_sequence: event.wpSequence,
    kind: event.kind,
    data: toStruct(event.data),
    at: event.at,
  };
}

/** Default of {@link CoreServiceOptions.maxStreamBacklogBytes}. */
const DEFAULT_STREAM_BACKLOG_BYTES = 4 * 1024 * 1024;

/**
 * A writer for an endless server stream that a reader may stop reading: grpc-js buffers every write
 * the reader has not taken, without bound. Past `maxBytes` unread, the stream stops (`stop`) and ends
 * with RESOURCE_EXHAUSTED once the reader has taken what was sent. Returns false once it has ended.
 */
function boundedWriter<T extends object>(call: ServerWritableStream<unknown, T>, maxBytes: number, stop: () => void) {
  let backlog = 0;
  let ended = false;
  return (message: T): boolean => {
    if (ended) return false;
    const bytes = Buffer.byteLength(JSON.stringify(message));
    backlog += bytes;
    call.write(message, () => {
      backlog -= bytes;
    });
    if (backlog <= maxBytes) return true;
    ended = true;
    stop();
    failStream(call, new GrpcServerError('resource_exhausted', `the reader fell more than ${maxBytes} bytes behind; reconnect`));
    return false;
  };
}

const slug = (value: string) => parseInput(slugSchema, value, 'slug');

/** A work package's sequence from the wire: 1 or more, else INVALID_ARGUMENT naming `field` (never a lookup that finds nothing). */
function sequence(value: number, field: string): number {
  if (!Number.isInteger(value) || value < 1) throw new InvalidArgumentError(field, 'a positive integer');
  return value;
}

/** Options of {@link coreServiceHandlers}. */
export interface CoreServiceOptions {
  workflow: Workflow;
  dispatchTool?: DispatchTool;
  authorize: Authorize;
  /** Bytes a `StreamAgentEvents` reader may leave unread before its stream ends with RESOURCE_EXHAUSTED (default 4 MiB). */
  maxStreamBacklogBytes?: number;
  /**
   * How often `StreamAgentEvents` reads the store for events other processes stored (default 250 ms); events of
   * this process wake it at once.
   */
  eventPollIntervalMs?: number;
}

/**
 * `StreamAgentEvents`: events are read from the workflow store, so jobs another process runs (`yard implement`)
 * stream too. Stored events after `after_event_id` are replayed, then new ones follow as they are stored; with
 * `job_id`, the stream ends after the job's final status (a job that ended without one stored gets its state).
 */
async function streamAgentEvents(
  call: ServerWritableStream<{ job_id: string; feature_slug: string; after_event_id: number }, AgentEventMsg>,
  options: { workflow: Workflow; authorize: Authorize; maxStreamBacklogBytes: number; pollIntervalMs: number },
): Promise<void> {
  const { workflow } = options;
  let closed = false;
  let wake: (() => void) | undefined;
  const onEvent = () => wake?.();
  const stop = () => {
    closed = true;
    workflow.events.off('workflow:agent_event', onEvent);
    wake?.();
  };
  try {
    options.authorize(call);
    const { job_id: jobId, feature_slug: featureSlug } = call.request;
    let after = Number(call.request.after_event_id ?? 0);
    if (!Number.isSafeInteger(after) || after < 0) throw new InvalidArgumentError('after_event_id', '0 or a stored event id');
    if (featureSlug) await workflow.getFeature(slug(featureSlug));
    if (jobId && !(await workflow.store.reader.getJob(jobId)))
      throw new GrpcServerError('not_found', `job ${echoed(jobId)} does not exist`);
    workflow.events.on('workflow:agent_event', onEvent);
    call.once('cancelled', stop);
    call.once('close', stop);
    const send = boundedWriter(call, options.maxStreamBacklogBytes, stop);
    const filter = { ...(jobId ? { jobId } : {}), ...(featureSlug ? { featureSlug } : {}) };
    while (!closed) {
      // Read the job before the events: a job that is final here has stored its last event already.
      const job = jobId ? await workflow.store.reader.getJob(jobId) : undefined;
      const batch = await workflow.store.reader.listAgentEvents({ ...filter, afterId: after, limit: 500 });
      for (const event of batch) {
        after = event.id;
        if (!send(agentEventMessage(event))) return;
        if (jobId && event.kind === 'status' && FINAL_JOB_STATES.has(String(event.data.state))) {
          stop();
          call.end();
          return;
        }
      }
      if (batch.length === 500) continue;
      if (job && FINAL_JOB_STATES.has(job.state)) {
        // Ended without a stored final status (a job recorded before events were stored, or a killed process).
        send(
          agentEventMessage({
            jobId,
            featureSlug: job.feature_slug,
            wpSequence: job.wp_sequence,
            kind: 'status',
            data: { state: job.state, outcome: job.outcome },
            at: Date.parse(job.updated_at),
          }),
        );
        stop();
        call.end();
        return;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.pollIntervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } catch (error) {
    stop();
    failStream(call, error);
  }
}

/** The `CoreService` implementation. */
export function coreServiceHandlers(options: CoreServiceOptions): CoreServiceHandlers {
  const { workflow, authorize } = options;
  const maxStreamBacklogBytes = options.maxStreamBacklogBytes ?? DEFAULT_STREAM_BACKLOG_BYTES;
  return {
    GetFeature: unary(authorize, async (req) => workflow.getFeature(slug(req.slug))),
    ListFeatures: unary(authorize, async (req) => ({
      features: await workflow.listFeatures(req.state ? { state: req.state } : {}),
    })),
    GetFeatureState: unary(authorize, async (req) => {
      const feature = await workflow.getFeature(slug(req.slug));
      const index = FEATURE_STATES.indexOf(feature.state);
      const next = FEATURE_STATES[index + 1];
      return {
        slug: feature.slug,
        state: feature.state,
        updated_at: feature.updated_at,
        ...(next ? { next_state: next, next_command: Object.entries(FEATURE_COMMANDS).find(([, to]) => to === next)![0] } : {}),
      };
    }),
    ListWorkPackages: unary(authorize, async (req) => {
      const s = slug(req.slug);
      const [packages, waves] = await Promise.all([workflow.listWorkPackages(s), workflow.waves(s)]);
      return { work_packages: packages.map(workPackageMessage), waves: waves.map((sequences) => ({ sequences })) };
    }),
    GetWorkPackageStatus: unary(authorize, async (req) => {
      const s = slug(req.slug);
      const wp = await workflow.getWorkPackage(s, sequence(req.sequence, 'sequence'));
      const all = await workflow.listWorkPackages(s);
      const done = new Set(all.filter((w) => w.state === 'DONE').map((w) => w.sequence));
      const waitingOn = [...(effectiveDependencies(all).get(wp.sequence) ?? [])].filter((d) => !done.has(d)).sort((a, b) => a - b);
      const active = (await workflow.store.reader.listJobs({ featureSlug: s })).find(
        (j) => j.wp_sequence === wp.sequence && !FINAL_JOB_STATES.has(j.state),
      );
      return {
        work_package: workPackageMessage(wp),
        ready: waitingOn.length === 0,
        waiting_on: waitingOn,
        ...(active ? { active_job_id: active.id } : {}),
      };
    }),
    CheckGovernanceGate: unary(authorize, async (req) =>
      workflow.checkGovernance(slug(req.slug), {
        ...(req.wp_sequence !== undefined && req._wp_sequence ? { wp_sequence: sequence(req.wp_sequence, 'wp_sequence') } : {}),
        ...(req.to !== undefined && req._to ? { to: req.to } : {}),
      }),
    ),
    VerifyAuditChain: unary(authorize, async (req) => {
      const s = slug(req.slug);
      await workflow.getFeature(s);
      const v = await workflow.audit.verify(s);
      return {
        valid: v.valid,
        entries_verified: v.entries_verified,
        ...(v.first_invalid_id !== null ? { first_invalid_id: v.first_invalid_id } : {}),
        ...(v.error_message !== null ? { error_message: v.error_message } : {}),
        ...(v.error_code !== null ? { error_code: v.error_code } : {}),
        root: v.root,
        origin: v.origin,
      };
    }),
    DispatchCommand: unary(authorize, async (req, caller) => {
      const tool = options.dispatchTool;
      if (!tool) throw new WorkflowError('not_implemented', 'the dispatch tool is not configured on this server');
      // A keyed caller acts under its key's name; a key-less one (this machine only) as the server's actor.
      const result = await tool.dispatch(
        {
          command: 'dispatch_command',
          ...(req.feature_slug ? { feature_slug: req.feature_slug } : {}),
          args: fromStruct(req.args),
        },
        caller ? { actor: caller.name } : {},
      );
      return {
        ok: result.ok,
        command: result.command,
        exit_code: result.exit_code,
        duration_ms: result.duration_ms,
        result: toValue(result.result),
        ...(result.error
          ? { error: { code: result.error.code, message: result.error.message, details: toStruct(result.error.details ?? {}) } }
          : {}),
        audit: toStruct(result.audit),
        warnings: result.warnings ?? [],
      };
    }),
    GetAuditTrail: (call: ServerWritableStream<{ slug: string; limit: number; since: string }, AuditEntryMsg>) => {
      void (async () => {
        try {
          authorize(call);
          const s = slug(call.request.slug);
          await workflow.getFeature(s);
          if (call.request.limit < 0)
            throw new WorkflowError('invalid_argument', 'limit: 0 (all) or more', { details: { field: 'limit' } });
          const options = {
            ...(call.request.since ? { since: call.request.since } : {}),
            ...(call.request.limit > 0 ? { limit: call.request.limit } : {}),
          };
          for (const entry of await workflow.audit.entries(s, options)) {
            if (call.cancelled) return;
            if (!call.write(auditEntryMessage(entry))) await new Promise((resolve) => call.once('drain', resolve));
          }
          call.end();
        } catch (error) {
          failStream(call, error);
        }
      })();
    },
    StreamAgentEvents: (call: ServerWritableStream<{ job_id: string; feature_slug: string; after_event_id: number }, AgentEventMsg>) =>
      void streamAgentEvents(call, { workflow, authorize, maxStreamBacklogBytes, pollIntervalMs: options.eventPollIntervalMs ?? 250 }),
  };
}
