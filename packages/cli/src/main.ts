/**
 * @module main
 * The `yard` entry: routes hidden `<category>:<action>` subcommands to their
 * runner, everything else through the commander tree, and turns every
 * failure into one documented exit code (and, with `--output json`, one
 * `{"error":{"code","message"}}` document on stderr). With `--output json`,
 * help is one JSON document too (`commandHelp`).
 */
import type { Command } from 'commander';
import { hiddenSubcommand, splitGlobals } from './argv.js';
import { CLI_EXIT_CODES, CliError } from './errors.js';
import type { CliIO, GlobalOptions } from './io.js';

/**
 * Runs `yard` with `argv` (without node and the script); returns the exit code.
 *
 * @example
 * ```ts
 * process.exitCode = await main(process.argv.slice(2), processIO());
 * ```
 */
export async function main(argv: readonly string[], io: CliIO): Promise<number> {
  if (hiddenSubcommand(argv) !== undefined) {
    const { runHiddenSubcommand } = await import('./commands/subcommand.js');
    return runHiddenSubcommand(argv, io);
  }
  let globals: GlobalOptions = { verbose: 0, output: 'table' };
  let exitCode: number = CLI_EXIT_CODES.ok;
  try {
    const split = splitGlobals(argv);
    globals = split.globals;
    const { buildProgram } = await import('./program.js');
    const { CommanderError } = await import('commander');
    const ctx = { io, globals };
    const program = buildProgram(async (load, exportName, args) => {
      const mod = await load();
      exitCode = await (mod[exportName] as (ctx: unknown, ...rest: unknown[]) => Promise<number>)(ctx, ...args);
    });
    const json = globals.output === 'json';
    // With --output json, help is one JSON document: commander still decides which command the
    // help is for, as for text help; its text is dropped and that command's definition printed.
    let helpFor: Command | undefined;
    program.exitOverride();
    for (const command of [program, ...allCommands(program)]) {
      command.exitOverride();
      if (json)
        command.on('beforeHelp', (context: { command: Command }) => {
          helpFor = context.command;
        });
      command.configureOutput({
        writeOut: (text: string) => (json ? undefined : io.stdout(text)),
        writeErr: (text: string) => io.stderr(text),
        // In JSON mode the error is reported once, as JSON, below. Otherwise it reads like every
        // other yard error, and says where the command's options are listed.
        outputError: (text: string, write: (text: string) => void) =>
          json ? undefined : write(`yard: ${text.replace(/^error: /, '')}  see: ${commandPath(command)} --help\n`),
      });
    }
    if (split.rest.length === 0 && !split.help) {
      io.stderr(program.helpInformation());
      return CLI_EXIT_CODES.usage;
    }
    try {
      await program.parseAsync([...split.rest, ...(split.help ? ['--help'] : [])], { from: 'user' });
    } catch (error) {
      if (!(error instanceof CommanderError)) throw error;
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.exitCode === 0) {
        if (helpFor) {
          const [{ commandHelp }, { emit }] = await Promise.all([import('./commandHelp.js'), import('./output.js')]);
          emit(io, 'json', commandHelp(helpFor));
        }
        return CLI_EXIT_CODES.ok;
      }
      if (error.code === 'commander.help' || error.code === 'commander.executeSubCommandAsync') return CLI_EXIT_CODES.usage;
      if (json) {
        const { reportError } = await import('./output.js');
        reportError(io, globals, new CliError('invalid_argument', error.message.replace(/^error: /, '')));
      }
      return CLI_EXIT_CODES.usage;
    }
    return exitCode;
  } catch (error) {
    const { exitCodeOf, reportError } = await import('./output.js');
    reportError(io, globals, error);
    return exitCodeOf(error);
  }
}

/** `yard wp move`: the words that name a command. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

function allCommands(command: Command): Command[] {
  return command.commands.flatMap((c) => [c, ...allCommands(c)]);
}
