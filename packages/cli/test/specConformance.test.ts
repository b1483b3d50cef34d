/**
 * Conformance with the specification's hidden-subcommand table. The expectations come from a
 * copy of that table checked in as `fixtures/spec-hidden-subcommands.json`, never from the
 * registry; each argument is put to the real `yard` (a hidden subcommand on the command line,
 * and the same call through `yard dispatch`) in a temporary repository:
 *
 * - name: the argument is accepted under the specification's spelling (no usage error);
 * - requiredness: leaving out a required one is a usage error naming it, and a call with only
 *   the arguments the table does not call optional runs;
 * - type: an integer, flag, enum or timestamp given a value of the wrong kind is a usage error
 *   naming it (a string or list takes any text), and each enum value is accepted;
 * - default: `yard <name> --help --output json` states the table's default, and the
 *   defaults the Limits table spells out take effect (diff:show, branch:create).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { type TempRepo, tempRepo, yard } from './helpers.js';

interface SpecArgument {
  type: 'string' | 'flag' | 'integer' | 'list' | 'enum' | 'timestamp' | null;
  required?: boolean;
  default?: unknown;
  values?: string[];
}
const FIXTURE = JSON.parse(readFileSync(new URL('./fixtures/spec-hidden-subcommands.json', import.meta.url), 'utf8')) as {
  subcommands: Record<string, { arguments: Record<string, SpecArgument> | null }>;
};
const SUBCOMMANDS = Object.entries(FIXTURE.subcommands);
const SLUG = 'conformance';
const snake = (name: string) => name.replace(/-/g, '_');

let repo: TempRepo;
let counter = 0;

before(async () => {
  repo = await tempRepo();
  assert.equal((await yard(['specify', SLUG, '--title', 'Conformance'], { cwd: repo.root })).code, 0);
  assert.equal((await yard(['wp', 'add', SLUG, '--title', 'One'], { cwd: repo.root })).code, 0);
  const spec = await yard(['artifact:write', '--feature-slug', SLUG, '--relative-path', 'spec.md', '--content', '# spec'], {
    cwd: repo.root,
  });
  assert.equal(spec.code, 0, spec.stderr);
});
after(() => repo.cleanup());

/** A value the argument takes that names something that exists (or harmlessly does not), so only the argument is under test. */
function sample(subcommand: string, name: string): string {
  const n = ++counter;
  const values: Record<string, string> = {
    name: subcommand === 'branch:checkout' ? 'main' : `conf-${n}`,
    base: 'main',
    remote: 'origin',
    pattern: 'conf-*',
    message: 'conformance',
    files: 'README.md',
    author: 'Ada Lovelace <ada@example.com>',
    target: 'HEAD',
    from: 'HEAD~1',
    to: 'HEAD',
    unified: '2',
    index: '0',
    path: subcommand === 'worktree:remove' ? '.worktrees/none' : `.worktrees/conf-${n}`,
    branch: `conf-tree-${n}`,
    'feature-slug': SLUG,
    'wp-id': '1',
    'relative-path': 'spec.md',
    content: '# spec',
    'from-file': 'README.md',
    transition: 'SHIPPED',
    rule: 'wp-ci-before-review',
    action: 'enable',
    actor: 'Test User',
    since: '2020-01-01T00:00:00Z',
    limit: '5',
    output: 'json',
    where: 'actor = alice',
    'group-by': 'actor',
    'order-by': 'id',
  };
  const value = values[name];
  assert.ok(value !== undefined, `no sample value for ${subcommand} --${name}`);
  return value;
}

/** One argument's value for a call: a string for the command line (true: a bare flag). */
type Args = Record<string, string | true>;

interface Answer {
  surface: 'cli' | 'dispatch';
  code: number;
  field?: string | undefined;
  message?: string | undefined;
}

/** `yard <subcommand> --name value … --output json`; `--output` given as an argument is the global option. */
async function viaCli(subcommand: string, args: Args): Promise<Answer> {
  const argv = [subcommand];
  for (const [name, value] of Object.entries(args)) argv.push(...(value === true ? [`--${name}`] : [`--${name}`, value]));
  if (!('output' in args)) argv.push('--output', 'json');
  const r = await yard(argv, { cwd: repo.root });
  if (r.code === 0) return { surface: 'cli', code: 0 };
  if (r.stderr.startsWith('{')) {
    const { error } = JSON.parse(r.stderr) as { error: { message: string; details?: { field?: string } } };
    return { surface: 'cli', code: r.code, field: error.details?.field, message: error.message };
  }
  // A refused --output cannot be answered in JSON: the text form names the option first.
  const text = /^yard: --([a-z-]+): /.exec(r.stderr);
  return { surface: 'cli', code: r.code, message: r.stderr.trim(), ...(text ? { field: snake(text[1]!) } : {}) };
}

/** The same call as a dispatch envelope: integers as numbers, flags as booleans, lists as arrays. */
async function viaDispatch(subcommand: string, args: Args, spec: Record<string, SpecArgument>): Promise<Answer> {
  const typed: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) {
    const type = spec[name]?.type;
    typed[name] =
      value === true ? true : type === 'integer' && /^\d+$/.test(value) ? Number(value) : type === 'list' ? value.split(',') : value;
  }
  const envelope = { command: 'dispatch_command', args: { command: subcommand, ...typed } };
  const r = await yard(['dispatch', JSON.stringify(envelope)], { cwd: repo.root });
  const result = r.json<{ exit_code: number; error?: { message: string; details?: { field?: string } } }>();
  assert.equal(result.exit_code, r.code);
  return {
    surface: 'dispatch',
    code: r.code,
    ...(result.error ? { field: result.error.details?.field, message: result.error.message } : {}),
  };
}

async function bothSurfaces(subcommand: string, args: Args, spec: Record<string, SpecArgument>): Promise<Answer[]> {
  return [await viaCli(subcommand, args), await viaDispatch(subcommand, args, spec)];
}

const USAGE = 2;
const show = (subcommand: string, args: Args, a: Answer) =>
  `${a.surface}: ${subcommand} ${JSON.stringify(args)} -> exit ${a.code} ${a.field ?? ''} ${a.message ?? ''}`;

describe('the specification hidden-subcommand table, argument by argument', { concurrency: 1 }, () => {
  for (const [subcommand, { arguments: spec }] of SUBCOMMANDS) {
    test(subcommand, async () => {
      const help = await yard([subcommand, '--help', '--output', 'json'], { cwd: repo.root });
      assert.equal(help.code, 0, `${subcommand} exists: ${help.stderr}`);
      if (spec === null) return; // listed without its arguments
      const described = new Map(
        help.json<{ args: { name: string; required: boolean; default: unknown }[] }>().args.map((a) => [a.name, a]),
      );

      // Every argument the table does not call optional, so the call can run.
      const base: Args = {};
      for (const [name, arg] of Object.entries(spec)) {
        if (arg.required === false) continue;
        base[name] = arg.type === 'flag' ? true : sample(subcommand, name);
      }
      for (const answer of await bothSurfaces(subcommand, base, spec))
        assert.notEqual(answer.code, USAGE, `runs with the table's arguments: ${show(subcommand, base, answer)}`);

      for (const [name, arg] of Object.entries(spec)) {
        const option = described.get(snake(name));
        assert.ok(option, `${subcommand} --help lists --${name}`);
        if (arg.required !== undefined) assert.equal(option.required, arg.required, `${subcommand} --${name} required`);
        if ('default' in arg) assert.deepEqual(option.default, arg.default, `${subcommand} --${name} default`);
        if (arg.type === 'flag') assert.equal(option.default, false, `${subcommand} --${name} is off unless given`);

        if (arg.required === true) {
          const { [name]: _left, ...without } = base;
          for (const answer of await bothSurfaces(subcommand, without, spec)) {
            assert.deepEqual(
              [answer.code, answer.field],
              [USAGE, snake(name)],
              `leaving out a required argument: ${show(subcommand, without, answer)}`,
            );
          }
        } else if (arg.required === false) {
          const given = { ...base, [name]: arg.type === 'flag' ? (true as const) : sample(subcommand, name) };
          for (const answer of await bothSurfaces(subcommand, given, spec))
            assert.notEqual(answer.code, USAGE, `--${name} is accepted: ${show(subcommand, given, answer)}`);
        }

        const WRONG: Partial<Record<string, string>> = { integer: 'many', flag: 'maybe', enum: 'bogus', timestamp: 'yesterday' };
        const wrong = arg.type === null ? undefined : WRONG[arg.type];
        if (wrong !== undefined) {
          const cli = await viaCli(subcommand, {
            ...base,
            [arg.type === 'flag' ? `${name}=${wrong}` : name]: arg.type === 'flag' ? true : wrong,
          });
          const dispatched = await viaDispatch(subcommand, { ...base, [name]: wrong }, spec);
          for (const answer of [cli, dispatched])
            assert.deepEqual(
              [answer.code, answer.field],
              [USAGE, snake(name)],
              `--${name} is ${arg.type}: ${show(subcommand, base, answer)}`,
            );
        }
        for (const value of arg.values ?? []) {
          const given = { ...base, [name]: value };
          for (const answer of await bothSurfaces(subcommand, given, spec))
            assert.notEqual(answer.code, USAGE, `--${name} ${value}: ${show(subcommand, given, answer)}`);
        }
      }
    });
  }

  test('the Limits table defaults take effect: diff:show HEAD~1..HEAD with 3 lines; branch:create from main', async () => {
    const shown = await yard(['diff:show', '--output', 'json'], { cwd: repo.root });
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.json<{ diff: string }>().diff, repo.git('diff', '--no-color', '--unified=3', 'HEAD~1', 'HEAD'));
    repo.git('switch', '--quiet', '-c', 'conf-elsewhere');
    repo.git('commit', '--quiet', '--allow-empty', '-m', 'elsewhere');
    try {
      const created = await yard(['branch:create', '--name', 'conf-from-default', '--output', 'json'], { cwd: repo.root });
      assert.equal(created.code, 0, created.stderr);
      assert.equal(repo.git('rev-parse', 'conf-from-default'), repo.git('rev-parse', 'main'));
    } finally {
      repo.git('switch', '--quiet', 'main');
    }
  });
});
