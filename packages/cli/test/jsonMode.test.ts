/**
 * The `--output json` contract (exactly one JSON document on stdout, or, on
 * failure, nothing there and `{"error":…}` on stderr), in-process through
 * `main`, for the commands that once bent it: `queue pop` on an empty queue
 * and a hidden subcommand's `--help`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BUILTIN_SUBCOMMANDS, SubcommandRegistry } from '@switchyard/workflow';
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
    summary: 'Delete a branch (force deletes unmerged work)',
    documented: true,
    args: [
      { name: 'name', option: '--name', required: true, default: undefined, description: 'branch name' },
      { name: 'force', option: '--force', required: false, default: false, description: 'delete even when not merged' },
    ].map(({ default: d, ...rest }) => (d === undefined ? rest : { ...rest, default: d })),
    input_schema: registry.jsonSchema('branch:delete'),
  });
  const schema = help.input_schema as { required: string[]; properties: Record<string, { type?: string }> };
  assert.deepEqual(schema.required, ['name']);
  assert.equal(schema.properties.force?.type, 'boolean');
  // Text help is unchanged, and neither form is an invocation: nothing is audit-logged.
  assert.match((await run('branch:delete', '--help')).stdout, /^Usage: yard branch:delete --name <value> \[options\]/);
  const unknown = await run('branch:nope', '--help', '--output', 'json');
  assert.deepEqual([unknown.code, unknown.stdout, JSON.parse(unknown.stderr).error.code], [2, '', 'invalid_argument']);
  assert.deepEqual(await auditLines(repo.root), []);
});
