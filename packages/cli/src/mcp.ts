/**
 * @module mcp
 * The MCP server behind `yard mcp`: the official `@modelcontextprotocol/sdk`
 * over stdio, listing one tool, `dispatch_command`, whose input schema is
 * generated from the subcommands' zod schemas. Calls go to the workflow's
 * `DispatchTool`; the JSON result is both the text content and the
 * structured content, and a failed subcommand is an `isError` result.
 */
import type { Readable, Writable } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { DispatchTool } from '@switchyard/workflow';

/** Options of {@link startMcpServer}. */
export interface McpServerOptions {
  tool: DispatchTool;
  /** JSON Schema of the tool's input (`feature_slug`, `args`). */
  inputSchema: Record<string, unknown>;
  /** Streams (default the process's stdin and stdout). */
  stdin?: Readable;
  stdout?: Writable;
}

const DESCRIPTION = [
  'Run one workflow subcommand in this repository and get a JSON result ({ok, command, exit_code, duration_ms, result | error, audit}).',
  'args.command names it as "<category>:<action>" (branch, commit, diff, stash, worktree, artifact, governance, audit);',
  "the other keys of args are its options in snake_case or kebab-case. feature_slug fills the subcommand's feature_slug.",
  'Every call is recorded in .agileplus/audit.jsonl.',
].join(' ');

/**
 * Starts the server on stdio.
 *
 * @example
 * ```ts
 * const server = await startMcpServer({ tool, inputSchema });
 * await server.closed;
 * ```
 */
export async function startMcpServer(options: McpServerOptions): Promise<{ closed: Promise<void>; close(): Promise<void> }> {
  const server = new Server({ name: 'yard', version: '0.1.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: 'dispatch_command', description: DESCRIPTION, inputSchema: options.inputSchema as { type: 'object' } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    if (request.params.name !== 'dispatch_command') {
      return {
        isError: true,
        content: [{ type: 'text', text: `unknown tool ${JSON.stringify(request.params.name)}; the tool is dispatch_command` }],
      };
    }
    const result = await options.tool.dispatch({ command: 'dispatch_command', ...(request.params.arguments ?? {}) });
    return {
      isError: !result.ok,
      content: [{ type: 'text', text: JSON.stringify(result) }],
      structuredContent: result as unknown as Record<string, unknown>,
    };
  });
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  const stdin = options.stdin ?? process.stdin;
  await server.connect(new StdioServerTransport(stdin, options.stdout ?? process.stdout));
  // The transport does not watch for the end of input; a client that closes our stdin is gone.
  stdin.once('end', () => void server.close());
  return { closed, close: () => server.close() };
}
