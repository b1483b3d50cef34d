/**
 * @module acpPermissions
 * Answers the agent's `session/request_permission` requests by policy:
 * `allow` and `reject` pick the first option of the matching kind at once;
 * `ask` shows the request as the session's dialog (`status.dialog`, answered
 * with `POST /dialog {"option": N}`) and waits. A request nobody answers
 * within the timeout is denied. Every step is a `permission` event, and the
 * tool call the request names is recorded as an activity.
 */
import type { PermissionOption, RequestPermissionRequest, RequestPermissionResponse } from '@agentclientprotocol/sdk';
import type { Scheduler, TimerHandle } from '@switchyard/runtime';
import type { PermissionOutcome } from '../activity.js';
import type { Conversation } from '../conversation.js';
import { AgentSessionError } from '../errors.js';
import type { AcpUpdateRecorder } from './acpUpdates.js';

/**
 * How permission requests are answered: `allow` and `reject` choose the first option of the
 * matching kind; `ask` shows the request as a dialog for the client to answer.
 */
export type AcpPermissionPolicy = 'allow' | 'reject' | 'ask';

/** How long an `ask` permission request waits for an answer before it is denied (5 minutes). */
export const DEFAULT_PERMISSION_TIMEOUT_MS = 5 * 60_000;

/** Settings of {@link AcpPermissions}. */
export interface AcpPermissionSettings {
  policy: AcpPermissionPolicy;
  timeoutMs: number;
  scheduler: Scheduler;
}

/** A request waiting for the client. */
interface Pending {
  options: PermissionOption[];
  settle(outcome: Exclude<PermissionOutcome, 'requested'>, option?: PermissionOption): void;
}

const ALLOW_KINDS = ['allow_once', 'allow_always'] as const;
const REJECT_KINDS = ['reject_once', 'reject_always'] as const;

function firstOfKind(options: readonly PermissionOption[], kinds: readonly string[]): PermissionOption | undefined {
  for (const kind of kinds) {
    const found = options.find((option) => option.kind === kind);
    if (found) return found;
  }
  return undefined;
}

const label = (option: PermissionOption) => option.name || option.kind;

/**
 * The permission requests of one ACP session.
 *
 * @example
 * ```ts
 * const permissions = new AcpPermissions(conversation, updates, { policy: 'ask', timeoutMs: 60_000, scheduler });
 * client.onRequest('session/request_permission', ({ params }) => permissions.request(params));
 * ```
 */
export class AcpPermissions {
  private pending: Pending | undefined;

  constructor(
    private readonly conversation: Conversation,
    private readonly updates: AcpUpdateRecorder,
    private readonly settings: AcpPermissionSettings,
  ) {}

  /** Answers one request: at once by policy, or when the client (or the timeout) does. */
  request(params: RequestPermissionRequest): Promise<RequestPermissionResponse> {
    this.updates.toolCall(params.toolCall);
    const known = this.conversation.activity(params.toolCall.toolCallId);
    const title = params.toolCall.title ?? (known?.type === 'tool_call' ? known.title : 'a tool call');
    const step = { toolCallId: params.toolCall.toolCallId, title, options: params.options.map(label) };
    if (this.settings.policy !== 'ask') {
      const allow = this.settings.policy === 'allow';
      const choice = firstOfKind(params.options, allow ? ALLOW_KINDS : REJECT_KINDS);
      this.conversation.permission({ ...step, outcome: allow ? 'granted' : 'denied', ...(choice ? { chosen: label(choice) } : {}) });
      return Promise.resolve(
        choice ? { outcome: { outcome: 'selected', optionId: choice.optionId } } : { outcome: { outcome: 'cancelled' } },
      );
    }
    // One dialog at a time: a newer request withdraws the older (ACP agents ask one at a time).
    this.withdraw();
    const { scheduler, timeoutMs } = this.settings;
    return new Promise((resolve) => {
      let timer: TimerHandle | undefined;
      const pending: Pending = {
        options: params.options,
        settle: (outcome, option) => {
          if (this.pending !== pending) return;
          this.pending = undefined;
          if (timer !== undefined) scheduler.clearTimeout(timer);
          this.conversation.setDialog(undefined);
          this.conversation.permission({ ...step, outcome, ...(option ? { chosen: label(option) } : {}) });
          resolve(option ? { outcome: { outcome: 'selected', optionId: option.optionId } } : { outcome: { outcome: 'cancelled' } });
        },
      };
      this.pending = pending;
      this.conversation.setDialog({ text: `The agent asks for permission: ${title}`, options: [...step.options] });
      this.conversation.permission({ ...step, outcome: 'requested' });
      timer = scheduler.setTimeout(() => {
        timer = undefined;
        pending.settle('timed_out', firstOfKind(params.options, REJECT_KINDS));
      }, timeoutMs);
    });
  }

  /** Picks option `option` (1-based) of the waiting request. */
  answer(option: number): void {
    const pending = this.pending;
    if (!pending) throw new AgentSessionError('no_dialog', 'the agent asks nothing (no permission request is waiting)');
    if (!Number.isInteger(option) || option < 1 || option > pending.options.length)
      throw new AgentSessionError('invalid_input', `option must be an integer from 1 to ${pending.options.length}`, { field: 'option' });
    pending.settle('answered', pending.options[option - 1]);
  }

  /** The turn ended, was cancelled or the agent left: a waiting request is answered `cancelled`, as ACP asks. */
  withdraw(): void {
    this.pending?.settle('withdrawn');
  }
}
