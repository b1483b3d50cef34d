/**
 * The `--output json` contract (exactly one JSON document on stdout, or, on
 * failure, nothing there and `{"error":…}` on stderr), in-process through
 * `main`, for the commands that once bent it: `queue pop` on an empty queue,
 * a hidden subcommand's `--help`, and every other command's `--help`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BUILTIN_SUBCOMMANDS, SubcommandRegistry } from '@switchyard/workflow';
import type { Command } from 'commander';
import type { CommandHelp, OptionHelp } from '../src/commandHelp.js';
import { buildProgram } from '../src/program.js';
import { auditLines, type TempRepo, tempRepo, yard } from './helpers.js';

let repo: TempRepo;
const run = (...args: string[]) => yard(args, { cwd: repo.root });

before(async () => {
  repo = await tempRepo();
});
after(() => repo.cleanup());

test('queue pop on an empty queue is a not-found like any other: exit 3, nothing on stdout, the error on stderr', async () => {
  const json = await run('queue', 'pop', '--output', 'json');
  assert.deepEqual([json.code, json.stdout], [3, '']);
  assert.deepEqual(JSON.parse(json.stderr), {
    error: { code: 'not_found', message: 'the queue has no open item', details: { what: 'open backlog item' } },
  });
  const text = await run('queue', 'pop');
  assert.deepEqual([text.code, text.stdout, text.stderr], [3, '', 'yard: the queue has no open item (not_found)\n']);
  assert.equal((await run('queue', 'add', 'One', '--type', 'task', '--output', 'json')).code, 0);
  const popped = await run('queue', 'pop', '--output', 'json');
  assert.deepEqual([popped.code, popped.stderr, popped.json<{ title: string; status: string }>().title], [0, '', 'One']);
});

test('<name>:<action> --help --output json prints the description and the argument schema as one JSON document', async () => {
  const registry = new SubcommandRegistry(BUILTIN_SUBCOMMANDS);
  const r = await run('branch:delete', '--help', '--output', 'json');
  assert.deepEqual([r.code, r.stderr], [0, '']);
  const help = r.json<Record<string, unknown>>();
  assert.deepEqual(help, {
    name: 'branch:delete',
    summary: 'Delete a branch (force deletes unmerged work; --remote deletes it on that remote)',
    documented: true,
    args: [
      { name: 'name', option: '--name', required: true, default: undefined, description: 'branch name' },
      { name: 'force', option: '--force', required: false, default: false, description: 'delete even when not merged' },
      {
        name: 'remote',
        option: '--remote',
        required: false,
        default: undefined,
        description: 'delete the branch on this remote instead (e.g. origin)',
      },
    ].map(({ default: d, ...rest }) => (d === undefined ? rest : { ...rest, default: d })),
    input_schema: registry.jsonSchema('branch:delete'),
  });
  const schema = help.input_schema as { required: string[]; properties: Record<string, { type?: string; default?: unknown }> };
  assert.deepEqual(schema.required, ['name']);
  assert.deepEqual([schema.properties.force?.type, schema.properties.force?.default], ['boolean', false]);
  // Text help is unchanged, and neither form is an invocation: nothing is audit-logged.
  assert.match((await run('branch:delete', '--help')).stdout, /^Usage: yard branch:delete --name <value> \[options\]/);
  const unknown = await run('branch:nope', '--help', '--output', 'json');
  assert.deepEqual([unknown.code, unknown.stdout, JSON.parse(unknown.stderr).error.code], [2, '', 'invalid_argument']);
  assert.deepEqual(await auditLines(repo.root), []);
});

/** Every command of the tree with the words that run it. */
function commandsOf(command: Command, words: string[] = []): [string[], Command][] {
  return command.commands.flatMap((c) => [[[...words, c.name()], c] as [string[], Command], ...commandsOf(c, [...words, c.name()])]);
}

test('every command answers --help --output json with one JSON document read off its commander definition', async () => {
  const program = buildProgram(async () => undefined);
  for (const [words, command] of [[[], program] as [string[], Command], ...commandsOf(program)]) {
    const r = await run(...words, '--help', '--output', 'json');
    const label = ['yard', ...words].join(' ');
    assert.deepEqual([r.code, r.stderr], [0, ''], label);
    const help = r.json<CommandHelp>();
    assert.equal(help.name, label);
    assert.match(help.usage, new RegExp(`^${label} `));
    assert.equal(help.description, command.description(), label);
    assert.deepEqual(
      help.arguments.map((a) => [a.name, a.required, a.variadic]),
      command.registeredArguments.map((a) => [a.name(), a.required, a.variadic]),
      label,
    );
    assert.deepEqual(
      help.options.map((o) => o.flags),
      [...command.options.map((o) => o.flags), '-h, --help'],
      label,
    );
    assert.deepEqual(
      help.subcommands.map((c) => c.name).filter((name) => name !== 'help'),
      command.commands.map((c) => c.name()),
      label,
    );
    if (words.length)
      assert.deepEqual(
        help.global_options?.map((o) => o.flags),
        program.options.map((o) => o.flags),
        label,
      );
    else assert.equal(help.global_options, undefined);
  }
});

test('--help --output json states types, defaults, choices, mandatory options and conflicts; text help is unchanged', async () => {
  const help = async (...words: string[]) => {
    const r = await run(...words, '--help', '--output', 'json');
    assert.deepEqual([r.code, r.stderr], [0, ''], words.join(' '));
    return r.json<CommandHelp>();
  };
  const option = (h: CommandHelp, long: string): OptionHelp => h.options.find((o) => o.long === long)!;
  const wpAdd = await help('wp', 'add');
  assert.deepEqual(
    { ...wpAdd, global_options: undefined },
    {
      name: 'yard wp add',
      usage: 'yard wp add [options] <slug>',
      description: 'Add a work package',
      arguments: [{ name: 'slug', description: '', required: true, variadic: false }],
      options: [
        { flags: '--title <title>', long: '--title', description: 'what the package delivers', type: 'string', required: true },
        {
          flags: '--depends-on <sequences>',
          long: '--depends-on',
          description: 'packages it waits for, comma separated',
          type: 'string',
          required: false,
        },
        {
          flags: '--file-scope <paths>',
          long: '--file-scope',
          description: 'repository paths it touches, comma separated',
          type: 'string',
          required: false,
        },
        { flags: '-h, --help', long: '--help', short: '-h', description: 'display help for command', type: 'boolean', required: false },
      ],
      global_options: undefined,
      subcommands: [],
    },
  );
  assert.deepEqual(
    wpAdd.global_options?.find((o) => o.long === '--output'),
    {
      flags: '--output <format>',
      long: '--output',
      description: 'output format',
      type: 'string',
      required: false,
      default: 'table',
      choices: ['table', 'json', 'markdown'],
    },
  );
  const implement = await help('implement');
  assert.deepEqual(
    ['--wp', '--parallel', '--no-wait'].map((long) => [option(implement, long).type, option(implement, long).default]),
    [
      ['string[]', []],
      ['string', '1'],
      ['boolean', true],
    ],
  );
  assert.deepEqual(option(await help('evidence'), '--failed').conflicts_with, ['passed']);
  assert.deepEqual((await help('queue', 'add')).options[0], {
    flags: '--type <type>',
    long: '--type',
    description: 'item type',
    type: 'string',
    required: true,
    choices: ['bug', 'feature', 'idea', 'task'],
  });
  assert.deepEqual((await help('agent', 'serve')).arguments, [
    { name: 'command', description: 'the agent command and its arguments, after --', required: true, variadic: true },
  ]);
  const root = await help();
  assert.deepEqual(root.subcommands.slice(0, 3), [
    {
      name: 'init',
      usage: 'init [options]',
      description: "Write .agileplus/config.yaml: the repository's test and lint commands as the local CI command, you as admin",
    },
    { name: 'specify', usage: 'specify [options] <slug>', description: 'Create a feature (or update its spec) and move it to SPECIFIED' },
    {
      name: 'research',
      usage: 'research [options] <slug>',
      description:
        'Write <slug>/research.md (the spec, the files and symbols it touches, their history; drafted through the gateway when configured) and move to RESEARCHED',
    },
  ]);
  // `yard help <command>` is a help request like `--help`.
  const viaHelp = await run('help', 'wp', '--output', 'json');
  assert.deepEqual([viaHelp.code, viaHelp.json<CommandHelp>().name], [0, 'yard wp']);

  // Text help is commander's, as before, with the exit codes after the top level's.
  const program = buildProgram(async () => undefined);
  const text = await run('wp', 'add', '--help');
  assert.deepEqual([text.code, text.stdout], [0, program.commands.find((c) => c.name() === 'wp')!.commands[0]!.helpInformation()]);
  const top = await run('--help');
  assert.ok(top.stdout.startsWith(program.helpInformation()), 'yard --help is the same text');
  assert.match(top.stdout, /\nExit codes:\n/);
});

test('usage errors and help shown as an error are one {"error":…} document on stderr in JSON mode: exit 2, nothing on stdout', async () => {
  const program = buildProgram(async () => undefined);
  const names = (command: Command) => command.commands.map((c) => c.name());
  const feature = program.commands.find((c) => c.name() === 'feature')!;
  const cases: [string[], Record<string, unknown>][] = [
    [
      ['feature'],
      { code: 'invalid_argument', message: 'yard feature: a command is required', details: { field: 'command', choices: names(feature) } },
    ],
    [[], { code: 'invalid_argument', message: 'yard: a command is required', details: { field: 'command', choices: names(program) } }],
    [['-v'], { code: 'invalid_argument', message: 'yard: a command is required', details: { field: 'command', choices: names(program) } }],
    [
      ['help', 'nope'],
      { code: 'invalid_argument', message: "unknown command 'nope'", details: { field: 'command', choices: names(program) } },
    ],
    [
      ['feature', 'help', 'nope'],
      { code: 'invalid_argument', message: "unknown command 'nope'", details: { field: 'command', choices: names(feature) } },
    ],
    [['frobnicate'], { code: 'invalid_argument', message: "unknown command 'frobnicate'" }],
    [['feature', 'list', '--colour'], { code: 'invalid_argument', message: "unknown option '--colour'" }],
    [['--bogus'], { code: 'invalid_argument', message: "unknown option '--bogus'" }],
  ];
  for (const [args, error] of cases) {
    const label = ['yard', ...args].join(' ');
    const r = await run(...args, '--output', 'json');
    assert.deepEqual([r.code, r.stdout], [2, ''], label);
    assert.deepEqual(JSON.parse(r.stderr), { error }, `${label}: ${r.stderr}`);
  }
  // Text mode is unchanged: commander's help for the group, on stderr.
  const text = await run('feature');
  assert.deepEqual([text.code, text.stdout, text.stderr], [2, '', feature.helpInformation()]);
  const bare = await run();
  assert.deepEqual([bare.code, bare.stdout, bare.stderr], [2, '', program.helpInformation()]);
  const unknownHelp = await run('help', 'nope');
  assert.deepEqual([unknownHelp.code, unknownHelp.stdout], [2, '']);
  assert.ok(unknownHelp.stderr.startsWith(program.helpInformation()), unknownHelp.stderr);
});
