/**
 * @module schemas
 * The agent session API's bodies as zod schemas: they validate requests and
 * produce `/openapi.json`, so the documentation cannot drift from the code.
 * Exported for clients that want the same types.
 */
import { z } from '@hono/zod-openapi';

export const AgentStatusSchema = z.enum(['stable', 'running']).openapi('AgentStatus', {
  description:
    '`running` while the agent works or input is pending; `stable` once its screen (or ACP turn) has been quiet for the stability window.',
});

export const AgentMessageSchema = z
  .object({
    id: z.number().int().openapi({ example: 1, description: '0, 1, 2, … in conversation order.' }),
    role: z.enum(['user', 'agent']),
    content: z.string().openapi({ example: 'You said: hello' }),
    time: z.string().openapi({ example: '2026-01-01T12:00:00.000Z', description: 'ISO 8601 time of the last change.' }),
  })
  .openapi('AgentMessage');

export const MessagesResponseSchema = z.object({ messages: z.array(AgentMessageSchema) }).openapi('MessagesResponse');

export const DialogSchema = z
  .object({
    text: z.string().openapi({ example: 'Do you trust the files in this folder?' }),
    options: z.array(z.string()).openapi({
      example: ['Yes, proceed', 'No, exit'],
      description: 'The labels in screen order; `POST /dialog {"option": N}` picks the N-th (1-based).',
    }),
  })
  .openapi('Dialog', {
    description:
      'A choice or confirmation the agent shows (trust prompt, API-key prompt, tool permission). While it is shown, user messages are refused with 409.',
  });

export const StatusResponseSchema = z
  .object({
    status: AgentStatusSchema,
    agent_type: z.string().openapi({ example: 'generic' }),
    transport: z.enum(['pty', 'acp']),
    exited: z
      .object({ exit_code: z.number().int().nullable(), signal: z.union([z.string(), z.number()]).nullable() })
      .optional()
      .openapi({
        description:
          'Present once the agent process has ended; it takes no more messages. A program killed by a signal has `exit_code: null` and `signal` named, e.g. `SIGKILL`.',
      }),
    dialog: DialogSchema.optional().openapi({ description: 'Present while the agent shows a choice or confirmation.' }),
  })
  .openapi('StatusResponse');

export const PostMessageBodySchema = z
  .object({
    content: z.string().openapi({ example: 'print(6 * 7)', description: 'The message, or the keys to send when `type` is `raw`.' }),
    type: z.enum(['user', 'raw']).default('user').openapi({
      description:
        '`user`: typed as a bracketed paste followed by Enter, recorded, its echo stripped (409 while the agent runs). `raw`: sent to the terminal as they are, unrecorded (keys, `\\u0003` to interrupt), accepted at any time.',
    }),
  })
  .strict()
  .openapi('PostMessageBody');

export const PostDialogBodySchema = z
  .object({
    option: z.number().int().min(1).openapi({ example: 1, description: 'The option to pick, 1-based, as in `dialog.options`.' }),
  })
  .strict()
  .openapi('PostDialogBody');

export const OkResponseSchema = z.object({ ok: z.literal(true) }).openapi('OkResponse');

export const UploadResponseSchema = z
  .object({
    ok: z.literal(true),
    path: z
      .string()
      .openapi({ example: '/tmp/switchyard-agent-uploads-x1/3f9c2a1b-notes.txt', description: 'Where the agent can read the file.' }),
    size: z.number().int(),
  })
  .openapi('UploadResponse');

export const ScreenResponseSchema = z
  .object({
    lines: z.array(z.string()),
    cols: z.number().int(),
    rows: z.number().int(),
    cursor: z.object({ row: z.number().int(), col: z.number().int() }),
    alternate: z.boolean(),
  })
  .openapi('ScreenResponse');

export const ErrorBodySchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'conflict' }),
      message: z.string().openapi({ example: 'the agent is running; wait until its status is stable, or interrupt it with raw input' }),
      details: z.unknown().optional(),
    }),
  })
  .openapi('ErrorBody');

export type PostMessageBody = z.infer<typeof PostMessageBodySchema>;
export type StatusResponse = z.infer<typeof StatusResponseSchema>;
