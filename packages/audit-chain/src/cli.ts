/**
 * @module cli
 * The `audit-chain` command: verify, append, keygen, checkpoint, prove,
 * verify-proof, repair and export-checkpoint. Exit codes: 0 valid or done,
 * 1 invalid, 2 usage or I/O error.
 */
import { parseArgs } from 'node:util';
import { COMMANDS, type CommandContext, UsageError } from './cliCommands.js';

const USAGE = `audit-chain: write and verify tamper-evident JSONL audit logs

Usage: audit-chain <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(18)}${command.summary}`)
  .join('\n')}

Run \`audit-chain <command> --help\` for a command's options.
Exit codes: 0 valid/done, 1 invalid, 2 usage or I/O error.
`;

/** Runs the CLI with `argv` (without node and script); returns the exit code. */
export async function main(argv: readonly string[], context: CommandContext): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    context.stdout(USAGE);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version') {
    context.stdout('audit-chain (scheme jcs-sha256-v1)\n');
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    context.stderr(`audit-chain: unknown command ${JSON.stringify(name)}\n\n${USAGE}`);
    return 2;
  }
  try {
    const { values, positionals } = parseArgs({
      args: [...rest],
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    if (values.help) {
      context.stdout(`${command.usage}\n`);
      return 0;
    }
    return await command.run(values as Record<string, string | boolean | string[] | undefined>, positionals, context);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    context.stderr(`audit-chain ${name}: ${message}\n`);
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      context.stderr(`\n${command.usage}\n`);
    }
    return 2;
  }
}
