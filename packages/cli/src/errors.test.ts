import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EXIT_CODES } from '@switchyard/workflow';
import { CLI_EXIT_CODES, CliError } from './errors.js';

// The CLI keeps its own copy of the exit-code table so that `yard --help` loads nothing else;
// this pins the copy to the workflow's table, so the two cannot drift apart.
test("CLI_EXIT_CODES is the workflow's EXIT_CODES: the same names with the same numbers", () => {
  assert.deepEqual({ ...CLI_EXIT_CODES }, { ...EXIT_CODES });
  assert.deepEqual(Object.keys(CLI_EXIT_CODES), Object.keys(EXIT_CODES));
});

test('every CliError exits with a code from the table', () => {
  const codes = new Set<number>(Object.values(CLI_EXIT_CODES));
  for (const code of ['invalid_argument', 'not_found', 'already_exists', 'not_implemented', 'internal', 'audit_log_torn'] as const) {
    assert.ok(codes.has(new CliError(code, 'x').exitCode), code);
  }
});
