/**
 * @module grpcErrors
 * Workflow errors as gRPC statuses, in one table: `NOT_FOUND`,
 * `INVALID_ARGUMENT` (with a `google.rpc.BadRequest` naming the field),
 * `FAILED_PRECONDITION` (a refused transition; a failed gate carries a
 * `google.rpc.PreconditionFailure` with one violation per rule), and so on.
 * The rich details travel in the standard `grpc-status-details-bin`
 * trailer, the workflow's code in `switchyard-error-code`; internal
 * failures never echo their message.
 */
import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { type Violation, WorkflowError, type WorkflowErrorCode } from '@switchyard/workflow';
import protobuf from 'protobufjs';

/** The base error of this package (refusals of its own, like a missing API key). */
export class GrpcServerError extends Error {
  override name = 'GrpcServerError';
  readonly code: 'unauthenticated' | 'invalid_argument' | 'not_found' | 'unavailable' | 'resource_exhausted';

  constructor(code: GrpcServerError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }
}

/** The most characters of a caller's value that an error message repeats back. */
const MAX_ECHOED_CHARS = 128;

/**
 * A value the caller sent, quoted for an error message: cut to 128 characters with an ellipsis, so a
 * caller cannot make the server copy an arbitrarily long string into a status message and its logs.
 */
export function echoed(value: string): string {
  if (value.length <= MAX_ECHOED_CHARS) return JSON.stringify(value);
  // Cut by code point, never inside a surrogate pair, and without splitting the whole of a long value.
  let kept = '';
  let count = 0;
  for (const char of value) {
    if (count++ === MAX_ECHOED_CHARS) return JSON.stringify(`${kept}…`);
    kept += char;
  }
  return JSON.stringify(kept);
}

/**
 * The most characters of a status message. A message quoting a caller's value in full (an unknown
 * id of 100,000 characters) makes a status too large to send: the caller then gets no answer and
 * waits for its deadline. {@link echoed} keeps the messages that quote on purpose short; this bounds
 * every other one.
 */
const MAX_STATUS_MESSAGE_CHARS = 1024;

/** `message` cut to {@link MAX_STATUS_MESSAGE_CHARS} code points, with an ellipsis when cut. */
function bounded(message: string): string {
  if (message.length <= MAX_STATUS_MESSAGE_CHARS) return message;
  const points = Array.from(message.slice(0, MAX_STATUS_MESSAGE_CHARS * 2));
  return points.length <= MAX_STATUS_MESSAGE_CHARS ? points.join('') : `${points.slice(0, MAX_STATUS_MESSAGE_CHARS).join('')}…`;
}

/** gRPC status of each workflow error code. */
export const WORKFLOW_GRPC_STATUS: Record<WorkflowErrorCode, status> = {
  invalid_argument: status.INVALID_ARGUMENT,
  query_parse_error: status.INVALID_ARGUMENT,
  unsafe_argument: status.INVALID_ARGUMENT,
  path_escape: status.INVALID_ARGUMENT,
  not_found: status.NOT_FOUND,
  already_exists: status.ALREADY_EXISTS,
  gate_failed: status.FAILED_PRECONDITION,
  invalid_transition: status.FAILED_PRECONDITION,
  backward_transition: status.FAILED_PRECONDITION,
  conflict: status.ABORTED,
  forbidden: status.PERMISSION_DENIED,
  signature_invalid: status.UNAUTHENTICATED,
  git_failed: status.INTERNAL,
  store_failed: status.INTERNAL,
  upstream_failed: status.UNAVAILABLE,
  timeout: status.DEADLINE_EXCEEDED,
  cancelled: status.CANCELLED,
  not_implemented: status.UNIMPLEMENTED,
};

const OWN_STATUS: Record<GrpcServerError['code'], status> = {
  unauthenticated: status.UNAUTHENTICATED,
  invalid_argument: status.INVALID_ARGUMENT,
  not_found: status.NOT_FOUND,
  unavailable: status.UNAVAILABLE,
  resource_exhausted: status.RESOURCE_EXHAUSTED,
};

// google.rpc.Status and the two detail messages we send, from googleapis' google/rpc/*.proto.
const rpc = protobuf.Root.fromJSON({
  nested: {
    google: {
      nested: {
        protobuf: { nested: { Any: { fields: { type_url: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } } } } },
        rpc: {
          nested: {
            Status: {
              fields: {
                code: { type: 'int32', id: 1 },
                message: { type: 'string', id: 2 },
                details: { rule: 'repeated', type: 'google.protobuf.Any', id: 3 },
              },
            },
            PreconditionFailure: {
              fields: { violations: { rule: 'repeated', type: 'Violation', id: 1 } },
              nested: {
                Violation: {
                  fields: { type: { type: 'string', id: 1 }, subject: { type: 'string', id: 2 }, description: { type: 'string', id: 3 } },
                },
              },
            },
            BadRequest: {
              fields: { field_violations: { rule: 'repeated', type: 'FieldViolation', id: 1 } },
              nested: { FieldViolation: { fields: { field: { type: 'string', id: 1 }, description: { type: 'string', id: 2 } } } },
            },
          },
        },
      },
    },
  },
});
const StatusType = rpc.lookupType('google.rpc.Status');
const PreconditionFailure = rpc.lookupType('google.rpc.PreconditionFailure');
const BadRequest = rpc.lookupType('google.rpc.BadRequest');

const any = (type: protobuf.Type, value: object) => ({
  type_url: `type.googleapis.com/${type.fullName.replace(/^\./, '')}`,
  value: type.encode(type.fromObject(value)).finish(),
});

/** Turns anything a handler throws into a gRPC `ServiceError`. */
export function toServiceError(error: unknown): Partial<ServiceError> {
  const metadata = new Metadata();
  if (error instanceof GrpcServerError) {
    metadata.set('switchyard-error-code', error.code);
    return { code: OWN_STATUS[error.code], details: bounded(error.message), metadata };
  }
  if (!(error instanceof WorkflowError)) {
    metadata.set('switchyard-error-code', 'internal');
    return { code: status.INTERNAL, details: 'internal error', metadata };
  }
  const code = WORKFLOW_GRPC_STATUS[error.code];
  const internal = code === status.INTERNAL || code === status.UNAVAILABLE;
  const message = internal ? error.code.replace(/_/g, ' ') : bounded(error.message);
  const details = [];
  if (error.code === 'gate_failed') {
    const violations = (error.details?.violations as Violation[] | undefined) ?? [];
    details.push(
      any(PreconditionFailure, {
        violations: violations.map((v) => ({ type: 'GOVERNANCE_GATE', subject: v.rule_id, description: `${v.message}. ${v.remediation}` })),
      }),
    );
  } else if (typeof error.details?.field === 'string') {
    details.push(any(BadRequest, { field_violations: [{ field: error.details.field, description: error.message }] }));
  }
  metadata.set('switchyard-error-code', error.code);
  metadata.set('grpc-status-details-bin', Buffer.from(StatusType.encode(StatusType.fromObject({ code, message, details })).finish()));
  return { code, details: message, metadata };
}

/**
 * Ends a server stream with the status of `error`. `call.destroy(error)` would
 * send none: grpc-js sends a stream's status from `_final`, which a destroyed
 * stream never runs, so the client would wait for ever. Its own `'error'`
 * listener sets the status and ends the stream.
 */
export function failStream(call: { emit(event: 'error', error: unknown): boolean }, error: unknown): void {
  call.emit('error', toServiceError(error));
}

/** What {@link decodeStatusDetails} finds in a `grpc-status-details-bin` trailer (for clients and tests). */
export interface StatusDetails {
  code: number;
  message: string;
  violations: { type: string; subject: string; description: string }[];
  field_violations: { field: string; description: string }[];
}

/**
 * Decodes the rich error details of a failed call.
 *
 * @example
 * ```ts
 * client.CheckGovernanceGate(req, (error) => console.log(decodeStatusDetails(error.metadata)?.violations));
 * ```
 */
export function decodeStatusDetails(metadata: Metadata | undefined): StatusDetails | undefined {
  const raw = metadata?.get('grpc-status-details-bin')[0];
  if (!raw || typeof raw === 'string') return undefined;
  const decoded = StatusType.toObject(StatusType.decode(raw), { defaults: true }) as {
    code: number;
    message: string;
    details: { type_url: string; value: Uint8Array }[];
  };
  const out: StatusDetails = { code: decoded.code, message: decoded.message, violations: [], field_violations: [] };
  for (const detail of decoded.details) {
    if (detail.type_url.endsWith('google.rpc.PreconditionFailure'))
      out.violations.push(...(PreconditionFailure.toObject(PreconditionFailure.decode(detail.value)) as StatusDetails).violations);
    if (detail.type_url.endsWith('google.rpc.BadRequest'))
      out.field_violations.push(...(BadRequest.toObject(BadRequest.decode(detail.value)) as StatusDetails).field_violations);
  }
  return out;
}
