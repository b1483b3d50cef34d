/**
 * @module subcommands
 * The built-in subcommands and the audited runner the surfaces call.
 */
import { GIT_SUBCOMMANDS } from './gitSubcommands.js';
import { WORKFLOW_SUBCOMMANDS } from './workflowSubcommands.js';

/** Every built-in subcommand (24 documented, the rest what users of each category expect). */
export const BUILTIN_SUBCOMMANDS = [...GIT_SUBCOMMANDS, ...WORKFLOW_SUBCOMMANDS];

export {
  DISPATCH_TOOL_NAME,
  type DispatchEnvelope,
  type DispatchResult,
  DispatchTool,
  type DispatchToolOptions,
  dispatchEnvelopeSchema,
  dispatchToolInputSchema,
  parseEnvelope,
  SUBCOMMAND_NAME,
  toResult,
} from './dispatchTool.js';
export { EXIT_CODES, exitCodeFor } from './exitCodes.js';
export { type InvokedSubcommand, invokeSubcommand } from './invokeSubcommand.js';
export {
  type ArgumentDescription,
  arg,
  argumentsJsonSchema,
  defineSubcommand,
  LEGACY_PREFIX,
  legacySubcommand,
  type RegistryShape,
  registryShape,
  SUBCOMMAND_CATEGORIES,
  type SubcommandCategory,
  type SubcommandContext,
  type SubcommandDefinition,
  SubcommandRegistry,
  versioningViolations,
} from './registry.js';
export { runSubcommand, type SubcommandOutcome } from './runSubcommand.js';
export {
  SUBCOMMAND_CHAIN,
  SUBCOMMAND_LOG_PATH,
  SubcommandAuditLog,
  type SubcommandAuditLogOptions,
  type SubcommandRecord,
  sanitizeArgs,
} from './subcommandAuditLog.js';
