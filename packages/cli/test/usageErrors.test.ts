/**
 * Usage errors commander finds (unknown commands and options, missing
 * arguments), in-process through `main`: they read like every other yard
 * error and point at the help of the command that was meant.
 */
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { test } from 'node:test';
import { yard } from './helpers.js';

const run = (...args: string[]) => yard(args, { cwd: tmpdir() });

test('unknown options, unknown commands and missing arguments: "yard: …", then the help to read; exit 2', async () => {
  const cases: [string[], string][] = [
    [['feature', 'list', '--colour'], "yard: unknown option '--colour'\n  see: yard feature list --help\n"],
    [['wp', 'move', 'x'], "yard: missing required argument 'sequence'\n  see: yard wp move --help\n"],
    [['frobnicate'], "yard: unknown command 'frobnicate'\n  see: yard --help\n"],
  ];
  for (const [args, stderr] of cases) {
    const r = await run(...args);
    assert.deepEqual([r.code, r.stderr, r.stdout], [2, stderr, ''], args.join(' '));
  }
  const json = await run('feature', 'list', '--colour', '--output', 'json');
  assert.deepEqual(JSON.parse(json.stderr), { error: { code: 'invalid_argument', message: "unknown option '--colour'" } });
});
