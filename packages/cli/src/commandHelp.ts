/**
 * @module commandHelp
 * `yard <command> --help --output json`: one command's help as one JSON document, for agents.
 * It is read off commander's own definition of the command, the one the text help is printed
 * from, so the two cannot drift apart: usage, description, arguments, options with their types,
 * defaults and choices, the global options, and the subcommands. (Hidden subcommands describe
 * themselves from the registry instead: `commands/subcommand.ts`.)
 */
import type { Argument, Command, Help, Option } from 'commander';

/** One option of a command. */
export interface OptionHelp {
  /** As the help shows it, e.g. `--title <title>`. */
  flags: string;
  long?: string;
  short?: string;
  description: string;
  /** `boolean` (a flag), `string` (takes a value) or `string[]` (repeatable). */
  type: 'boolean' | 'string' | 'string[]';
  /** Must be given. */
  required: boolean;
  default?: unknown;
  choices?: string[];
  /** Options it cannot be given with (their names). */
  conflicts_with?: string[];
}

/** One positional argument of a command. */
export interface ArgumentHelp {
  name: string;
  description: string;
  required: boolean;
  /** Takes the rest of the words. */
  variadic: boolean;
  default?: unknown;
  choices?: string[];
}

/** A command's help as `--help --output json` prints it. */
export interface CommandHelp {
  /** The words that run it, e.g. `yard wp add`. */
  name: string;
  usage: string;
  description: string;
  arguments: ArgumentHelp[];
  options: OptionHelp[];
  /** Options every command takes (those of `yard` itself); absent for `yard`. */
  global_options?: OptionHelp[];
  subcommands: { name: string; usage: string; description: string }[];
}

/**
 * Describes `command` from its commander definition.
 *
 * @example
 * ```ts
 * const help = commandHelp(program.commands.find((c) => c.name() === 'specify')!);
 * help.options.find((o) => o.long === '--title'); // { flags: '--title <title>', type: 'string', … }
 * ```
 */
export function commandHelp(command: Command): CommandHelp {
  const helper = command.createHelp();
  const ancestors: Command[] = [];
  for (let c = command.parent; c; c = c.parent) ancestors.push(c);
  const globals = ancestors.flatMap((c) => c.options.filter((o) => !o.hidden));
  return {
    name: [...ancestors.reverse(), command].map((c) => c.name()).join(' '),
    usage: helper.commandUsage(command),
    description: command.description(),
    arguments: command.registeredArguments.map(argumentHelp),
    options: helper.visibleOptions(command).map(optionHelp),
    ...(ancestors.length ? { global_options: globals.map(optionHelp) } : {}),
    subcommands: helper.visibleCommands(command).map((c) => subcommandHelp(c, helper)),
  };
}

function subcommandHelp(command: Command, helper: Help) {
  return { name: command.name(), usage: helper.subcommandTerm(command), description: helper.subcommandDescription(command) };
}

function argumentHelp(argument: Argument): ArgumentHelp {
  return {
    name: argument.name(),
    description: argument.description,
    required: argument.required,
    variadic: argument.variadic,
    ...(argument.defaultValue !== undefined ? { default: argument.defaultValue } : {}),
    ...(argument.argChoices ? { choices: [...argument.argChoices] } : {}),
  };
}

function optionHelp(option: Option): OptionHelp {
  // Commander's own rule (Command.addOption): `--no-x` alone makes x default to true.
  const dflt = option.negate ? (option.defaultValue ?? true) : option.defaultValue;
  const repeatable = option.variadic || Array.isArray(option.defaultValue);
  // Set by Option.conflicts(); commander's typings leave it out.
  const conflicts = (option as Option & { conflictsWith?: string[] }).conflictsWith ?? [];
  return {
    flags: option.flags,
    ...(option.long ? { long: option.long } : {}),
    ...(option.short ? { short: option.short } : {}),
    description: option.description,
    type: option.required || option.optional ? (repeatable ? 'string[]' : 'string') : 'boolean',
    required: option.mandatory,
    ...(dflt !== undefined ? { default: dflt } : {}),
    ...(option.argChoices ? { choices: [...option.argChoices] } : {}),
    ...(conflicts.length ? { conflicts_with: [...conflicts] } : {}),
  };
}
