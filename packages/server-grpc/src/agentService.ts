/**
 * @module agentService
 * `AgentService` handlers over the {@link AgentHub}: registration, the
 * session lifecycle (start, heartbeat, end), prompt delivery as a server
 * stream, and output collection.
 */
import type { ServerWritableStream } from '@grpc/grpc-js';
import type { AgentHub } from './agentHub.js';
import { type Authorize, unary } from './coreService.js';
import type { AgentServiceHandlers } from './generated/switchyard/workflow/v1/AgentService.js';
import type { Prompt } from './generated/switchyard/workflow/v1/Prompt.js';
import { failStream } from './grpcErrors.js';

/** The `AgentService` implementation. */
export function agentServiceHandlers(hub: AgentHub, authorize: Authorize): AgentServiceHandlers {
  return {
    RegisterAgent: unary(authorize, async (req) => hub.registerAgent(req)),
    StartSession: unary(authorize, async (req) => hub.startSession(req.agent_id)),
    Heartbeat: unary(authorize, async (req) => hub.heartbeat(req.session_id)),
    ReportOutput: unary(authorize, async (req) => {
      hub.reportOutput(req.session_id, req.task_id, req.chunk);
      return { ok: true };
    }),
    CompleteTask: unary(authorize, async (req) => {
      hub.completeTask(req.session_id, req.task_id, { exit_code: req.exit_code, pr_url: req.pr_url });
      return { ok: true };
    }),
    EndSession: unary(authorize, async (req) => {
      hub.endSession(req.session_id, req.reason);
      return { ok: true };
    }),
    ReceivePrompts: (call: ServerWritableStream<{ session_id: string }, Prompt>) => {
      try {
        authorize(call);
        const unsubscribe = hub.receivePrompts(
          call.request.session_id,
          (prompt) => call.write(prompt),
          () => call.end(),
        );
        call.once('cancelled', unsubscribe);
        call.once('close', unsubscribe);
      } catch (error) {
        failStream(call, error);
      }
    },
  };
}
