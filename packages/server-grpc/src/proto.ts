/**
 * @module proto
 * Loads the checked-in `workflow.proto` with proto-loader (snake_case
 * field names, as the workflow's records spell them; 64-bit integers as
 * numbers; defaults filled in). Types in `generated/` come from the same
 * file through `proto-loader-gen-types` (`pnpm gen-types`).
 */
import { fileURLToPath } from 'node:url';
import { loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync, type Options, type PackageDefinition } from '@grpc/proto-loader';
import type { ProtoGrpcType } from './generated/workflow.js';

/** Where the `.proto` lives (shipped with the package). */
export const WORKFLOW_PROTO_PATH = fileURLToPath(new URL('../proto/switchyard/workflow/v1/workflow.proto', import.meta.url));

/** The loader options the generated types assume. */
export const PROTO_LOADER_OPTIONS: Options = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true };

/** Fully qualified service names (for health checks and reflection). */
export const CORE_SERVICE = 'switchyard.workflow.v1.CoreService';
export const AGENT_SERVICE = 'switchyard.workflow.v1.AgentService';

/**
 * The package definition and the typed gRPC object (clients use it too).
 *
 * @example
 * ```ts
 * const { proto } = loadWorkflowProto();
 * const client = new proto.switchyard.workflow.v1.CoreService('127.0.0.1:50051', credentials.createInsecure());
 * ```
 */
export function loadWorkflowProto(): { definition: PackageDefinition; proto: ProtoGrpcType } {
  const definition = loadSync(WORKFLOW_PROTO_PATH, PROTO_LOADER_OPTIONS);
  return { definition, proto: loadPackageDefinition(definition) as unknown as ProtoGrpcType };
}
