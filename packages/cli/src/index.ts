/**
 * @module @switchyard/cli
 * The `yard` command as a library: run it in-process (`main`), compose the
 * workflow the way the CLI does (`openRuntime`), or serve the dispatch tool
 * over MCP (`startMcpServer`).
 */
export { type ArgKind, HIDDEN_NAME, hiddenSubcommand, parseSubcommandArgs, splitGlobals } from './argv.js';
export { DEFAULT_CONFIG_PATH, loadConfig, type YardConfig, yardConfigSchema } from './config.js';
export { CLI_EXIT_CODES, CliError, type CliErrorCode } from './errors.js';
export { type CliIO, type GlobalOptions, OUTPUT_FORMATS, type OutputFormat, processIO } from './io.js';
export { main } from './main.js';
export { type McpServerOptions, startMcpServer } from './mcp.js';
export { type AgentOverrides, agentAdapters, openRuntime, type Runtime, resolveActor, resolveRepo } from './runtime.js';
