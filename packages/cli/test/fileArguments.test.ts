/**
 * Files named on the command line (`--from-file`, `--config`) that cannot be
 * read, in-process through `main`: the error names the option and the path
 * once, in words (not Node's `ENOENT: …, open '…'`), and a missing file is
 * not found (exit 3). A FIFO a hidden subcommand reads (`--from-file`,
 * `--key-file`) is refused at once rather than waited on.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { makeFifo, settlesWithoutWaitingOn } from '@switchyard/test-support';
import { type TempRepo, tempRepo, yard } from './helpers.js';

let repo: TempRepo;
before(async () => {
  repo = await tempRepo();
  await mkdir(join(repo.root, 'a-directory'));
});
after(() => repo.cleanup());

const occurrences = (text: string, part: string) => text.split(part).length - 1;

test('a missing or unreadable --from-file or --config: exit 3, the option and the path once, no errno text', async () => {
  const cases: [string[], string, string, string][] = [
    [['specify', '001-x', '--title', 'X', '--from-file', 'spec.md'], '--from-file', 'no such file', 'spec.md'],
    [['specify', '001-x', '--title', 'X', '--from-file', 'a-directory'], '--from-file', 'a directory, not a file', 'a-directory'],
    [['feature', 'list', '--config', 'missing.yaml'], '--config', 'no such file', 'missing.yaml'],
    [['branch:list', '--config', 'nested/missing.yaml'], '--config', 'no such file', 'nested/missing.yaml'],
  ];
  for (const [args, option, words, file] of cases) {
    const path = join(repo.root, file);
    // A hidden subcommand's refusal would start the audit log, which its config names: it says it could not.
    const unlogged = args[0]!.includes(':');
    const suffix = unlogged
      ? '; not audit-logged: .agileplus/audit.jsonl would be started without the config that names it (repo_name)'
      : '';
    const json = await yard([...args, '--output', 'json'], { cwd: repo.root });
    assert.equal(json.code, 3, `${args.join(' ')}: ${json.stderr}`);
    assert.equal(json.stdout, '');
    const { error } = JSON.parse(json.stderr) as { error: { code: string; message: string; details: Record<string, unknown> } };
    assert.deepEqual(error, {
      code: 'not_found',
      message: `${option}: ${words}: ${path}${suffix}`,
      details: { field: option.slice(2).replace(/-/g, '_'), path, ...(unlogged ? { audit_logged: false } : {}) },
    });
    const text = await yard(args, { cwd: repo.root });
    assert.equal(text.stderr, `yard: ${option}: ${words}: ${path}${suffix} (not_found)\n`);
    assert.equal(occurrences(text.stderr, path), 1, 'the path once');
    assert.doesNotMatch(text.stderr, /ENOENT|EISDIR|open '/);
  }
});

test('a hidden subcommand whose --from-file or --key-file is a FIFO exits 3 at once, without waiting for a writer', async () => {
  assert.equal((await yard(['specify', '001-pipe', '--title', 'Pipe'], { cwd: repo.root })).code, 0);
  const pipe = join(repo.root, 'pipe');
  await makeFifo(pipe);
  const cases: [string[], string][] = [
    [['artifact:write', '--feature-slug', '001-pipe', '--relative-path', 'x.md', '--from-file', 'pipe'], 'from_file'],
    [['audit:checkpoint', '--feature-slug', '001-pipe', '--key-file', 'pipe', '--key-name', 'k'], 'key_file'],
  ];
  for (const [args, field] of cases) {
    const json = await settlesWithoutWaitingOn(pipe, yard([...args, '--output', 'json'], { cwd: repo.root }));
    assert.deepEqual([json.code, json.stdout], [3, ''], json.stderr);
    assert.deepEqual(JSON.parse(json.stderr), {
      error: { code: 'not_found', message: `${field} "pipe" is a FIFO (named pipe), not a regular file`, details: { field } },
    });
  }
});
