/**
 * @module main
 * The `yard` entry: routes hidden `<category>:<action>` subcommands to their
 * runner, everything else through the commander tree, and turns every
 * failure into one documented exit code (and, with `--output json`, one
 * `{"error":{"code","message"}}` document on stderr). With `--output json`,
 * help is one JSON document too (`commandHelp`), and the help commander
 * would print as an error (a command group without its command, `yard`
 * alone, `yard help <unknown>`) is an error document like any other.
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
    // Help commander shows because the command line is wrong (not because help was asked for).
    let helpAsError = false;
    program.exitOverride();
    for (const command of [program, ...allCommands(program)]) {
      command.exitOverride();
      if (json)
        command.on('beforeHelp', (context: { command: Command; error: boolean }) => {
          helpFor = context.command;
          helpAsError = context.error;
        });
      command.configureOutput({
        writeOut: (text: string) => (json ? undefined : io.stdout(text)),
        // Commander writes only help shown as an error and usage errors here; JSON mode reports both below.
        writeErr: (text: string) => (json ? undefined : io.stderr(text)),
        // In JSON mode the error is reported once, as JSON, below. Otherwise it reads like every
        // other yard error, and says where the command's options are listed.
        outputError: (text: string, write: (text: string) => void) =>
          json ? undefined : write(`yard: ${text.replace(/^error: /, '')}  see: ${commandPath(command)} --help\n`),
      });
    }
    if (split.rest.length === 0 && !split.help) {
      if (json) throw commandRequired(program);
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
      const usageError =
        error.code === 'commander.help' && helpFor && helpAsError
          ? helpShownForError(helpFor)
          : error.code === 'commander.help' || error.code === 'commander.executeSubCommandAsync'
            ? undefined
            : new CliError('invalid_argument', error.message.replace(/^error: /, ''));
      if (json && usageError) {
        const { reportError } = await import('./output.js');
        reportError(io, globals, usageError);
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

/**
 * The usage error behind help commander shows as an error for `command`: `yard help <word>` (or
 * `yard <group> help <word>`) naming no command, or a command group given without its command.
 */
function helpShownForError(command: Command): CliError {
  const [first, word] = command.args;
  if (first === 'help' && word !== undefined)
    return new CliError('invalid_argument', `unknown command '${word}'`, { field: 'command', choices: commandNames(command) });
  return commandRequired(command);
}

/** `yard feature` or `yard` alone: the group needs one of its commands. */
function commandRequired(command: Command): CliError {
  return new CliError('invalid_argument', `${commandPath(command)}: a command is required`, {
    field: 'command',
    choices: commandNames(command),
  });
}

function commandNames(command: Command): string[] {
  return command.commands.map((c) => c.name());
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
