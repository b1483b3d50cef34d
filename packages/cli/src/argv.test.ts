import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { hiddenSubcommand, parseSubcommandArgs, scanGlobals, splitGlobals } from './argv.js';
import { CliError } from './errors.js';

test('global options are taken from anywhere; -v counts; the rest keeps its order', () => {
  const split = splitGlobals([
    '-vv',
    'governance:check',
    '--feature-slug',
    'x',
    '--output',
    'json',
    '--verbose',
    '--repo=/r',
    '--to',
    'DONE',
  ]);
  assert.deepEqual(split.globals, { verbose: 3, output: 'json', repo: '/r' });
  assert.deepEqual(split.rest, ['governance:check', '--feature-slug', 'x', '--to', 'DONE']);
  assert.deepEqual(splitGlobals(['agent', 'serve', '--', 'claude', '-v', '--output', 'x']).rest, [
    'agent',
    'serve',
    '--',
    'claude',
    '-v',
    '--output',
    'x',
  ]);
  assert.throws(
    () => splitGlobals(['--output', 'yaml']),
    (e: unknown) => e instanceof CliError && e.code === 'invalid_argument',
  );
  assert.throws(() => splitGlobals(['--db']), /--db: a value is required/);
});

test('scanGlobals reads every global option around one given wrong and returns the first such as its error', () => {
  const scanned = scanGlobals(['branch:list', '--output', 'xml', '--repo', '/r', '--db']);
  assert.deepEqual([scanned.globals, scanned.rest], [{ verbose: 0, output: 'table', repo: '/r' }, ['branch:list']]);
  assert.ok(scanned.error instanceof CliError);
  assert.deepEqual([scanned.error.code, scanned.error.details], ['invalid_argument', { field: 'output' }]);
  assert.equal(scanGlobals(['branch:list', '--output=json']).error, undefined);
});

test('hidden subcommands are recognised after global options, and only as the first word', () => {
  assert.equal(hiddenSubcommand(['--repo', '/x', '-v', 'branch:create', '--name', 'a']), 'branch:create');
  assert.equal(hiddenSubcommand(['specify', 'a:b']), undefined);
  assert.equal(hiddenSubcommand(['--output', 'json']), undefined);
  assert.equal(hiddenSubcommand(['--', 'branch:list']), undefined);
});

test('booleans take no value, --no-x negates, lists repeat or take commas, values may start with a dash', () => {
  const kinds = { checkout: 'boolean', paths: 'list', message: 'value' } as const;
  const kindOf = (k: string) => kinds[k.replace(/-/g, '_') as keyof typeof kinds];
  assert.deepEqual(parseSubcommandArgs(['--checkout', '--paths', 'a,b', '--paths', 'c', '--message', '-x'], kindOf), {
    checkout: true,
    paths: ['a', 'b', 'c'],
    message: '-x',
  });
  assert.deepEqual(parseSubcommandArgs(['--no-checkout'], kindOf), { checkout: false });
  assert.deepEqual(parseSubcommandArgs(['--checkout=false'], kindOf), { checkout: 'false' });
  assert.throws(() => parseSubcommandArgs(['stray'], kindOf), /unexpected "stray"/);
  assert.throws(() => parseSubcommandArgs(['--message', 'a', '--message', 'b'], kindOf), /given twice/);
  assert.throws(() => parseSubcommandArgs(['--message'], kindOf), /a value is required/);
  assert.deepEqual(parseSubcommandArgs(['--constructor', 'x', '--to-string', 'y'], kindOf), { constructor: 'x', 'to-string': 'y' });
});

test('property: any record of values reads back from its command line', () => {
  const key = fc.stringMatching(/^[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,5})?$/);
  fc.assert(
    fc.property(
      fc.dictionary(
        key,
        fc.string({ minLength: 1 }).filter((v) => !v.startsWith('--')),
      ),
      (record) => {
        const argv = Object.entries(record).flatMap(([k, v]) => [`--${k}`, v]);
        assert.equal(JSON.stringify(parseSubcommandArgs(argv, () => 'value')), JSON.stringify(record));
      },
    ),
  );
});
