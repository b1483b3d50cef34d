/**
 * @module tools
 * The agent-facing tools: `yard dispatch` (one envelope from the argument
 * or stdin, one JSON result on stdout) and `yard mcp` (the same
 * `dispatch_command` tool served over MCP on stdio). Both go through the
 * workflow's `DispatchTool`, so each call writes one audit line.
 */
import { CliError } from '../errors.js';
import { emit, reportError } from '../output.js';
import type { CommandContext } from '../program.js';
import { withRuntime } from './shared.js';

/**
 * The dispatch tool's input schema as JSON Schema (generated from the registry's zod schemas, with
 * every argument's default, as `<name> --help --output json` shows them).
 */
export async function toolJsonSchema(): Promise<Record<string, unknown>> {
  const { argumentsJsonSchema, BUILTIN_SUBCOMMANDS, SubcommandRegistry, dispatchToolInputSchema } = await import('@switchyard/workflow');
  const schema = argumentsJsonSchema(dispatchToolInputSchema(new SubcommandRegistry(BUILTIN_SUBCOMMANDS)));
  delete schema.$schema;
  return schema;
}

/** `yard dispatch [json] [--schema]`. Exit code: the subcommand's. */
export async function dispatchCommand(ctx: CommandContext, json: string | undefined, opts: { schema?: boolean }): Promise<number> {
  if (opts.schema) {
    emit(ctx.io, 'json', await toolJsonSchema());
    return 0;
  }
  return withRuntime(ctx, async (rt) => {
    let input: string | undefined = json;
    if (input === undefined) {
      if (ctx.io.stdinIsTTY && ctx.globals.output !== 'json')
        ctx.io.stderr('yard: reading the dispatch envelope from standard input (end with Ctrl-D)\n');
      input = (await ctx.io.readStdin()).toString('utf8');
      if (input.trim() === '')
        throw new CliError('invalid_argument', 'no envelope: pass it as an argument or on stdin', { field: 'input' });
    }
    const result = await (await rt.dispatchTool()).dispatch(input);
    ctx.io.stdout(`${JSON.stringify(result, null, 2)}\n`);
    if (!result.ok) reportError(ctx.io, ctx.globals, Object.assign(new Error(result.error!.message), result.error));
    return result.exit_code;
  });
}

/** `yard mcp`: an MCP server on stdio with the one tool `dispatch_command`; runs until stdin closes. */
export function mcpCommand(ctx: CommandContext): Promise<number> {
  return withRuntime(ctx, async (rt) => {
    const { startMcpServer } = await import('../mcp.js');
    const server = await startMcpServer({ tool: await rt.dispatchTool(), inputSchema: await toolJsonSchema() });
    if (ctx.globals.verbose) ctx.io.stderr(`yard mcp: serving dispatch_command for ${rt.repoRoot} as ${rt.actor}\n`);
    await Promise.race([server.closed, ctx.io.stopSignal ?? new Promise(() => undefined)]);
    await server.close();
    return 0;
  });
}
