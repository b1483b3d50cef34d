import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runWorkspaceProgram } from '@switchyard/test-support';

const here = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const yardBin = fileURLToPath(new URL('../../packages/cli/src/bin.ts', import.meta.url));
const dir = await realpath(await mkdtemp(join(tmpdir(), 'surfaces-example-')));
after(() => rm(dir, { recursive: true, force: true }));

/** Splits a shell line into words, honouring single and double quotes (no expansions). */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

test('the CLI README session runs as shown: the refusal, the evidence, the audited subcommands', async () => {
  const readme = await readFile(fileURLToPath(new URL('../../packages/cli/README.md', import.meta.url)), 'utf8');
  const block = /## 30-second example[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)![1]!;
  const lines = block.split('\n').filter((l) => l.startsWith('$ yard '));
  assert.equal(lines.length, 10);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir });
  git('init', '--quiet', '--initial-branch=main');
  git('config', 'user.name', 'Alice');
  git('config', 'user.email', 'alice@example.invalid');
  await writeFile(join(dir, 'README.md'), '# shop\n');
  git('add', '-A');
  git('commit', '--quiet', '-m', 'initial');
  const outcomes: { code: number; stdout: string; stderr: string }[] = [];
  for (const line of lines) {
    const args = words(line.slice('$ yard '.length));
    outcomes.push(
      await runWorkspaceProgram(yardBin, args, { cwd: dir }).then(
        (r) => ({ code: 0, ...r }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
      ),
    );
  }
  assert.deepEqual(
    outcomes.map((o) => o.code),
    [0, 0, 0, 0, 4, 0, 0, 0, 0, 0],
  );
  assert.match(outcomes[4]!.stderr, /wp-ci-before-review: work package 1 of 001-login has no ci_output evidence/);
  assert.match(outcomes[6]!.stdout, /001-login wp1: DOING -> REVIEW/);
  assert.equal(JSON.parse(outcomes[7]!.stdout).command, 'branch:create');
  assert.equal(JSON.parse(outcomes[8]!.stdout).result.valid, true);
  assert.match(outcomes[9]!.stdout, /\| id \| timestamp \| actor \|/);
  const log = (await readFile(join(dir, '.agileplus', 'audit.jsonl'), 'utf8')).trim().split('\n');
  assert.deepEqual(
    log.map((l) => JSON.parse(l).command),
    ['branch:create', 'audit:verify', 'audit:log'],
  );
});

test('the HTTP example: a move, a refusal with its rule, a verified trail', async () => {
  const { stdout } = await runWorkspaceProgram(here('http.ts'));
  assert.equal(stdout, '200 CREATED -> SPECIFIED\n409 wp-ci-before-review\ntrue\n');
});

test('the gRPC example: the state and the streamed trail', async () => {
  const { stdout } = await runWorkspaceProgram(here('grpc.ts'));
  assert.equal(stdout, 'CREATED -> SPECIFIED (yard specify)\nNONE -> CREATED\n');
  const readme = await readFile(fileURLToPath(new URL('../../packages/server-grpc/README.md', import.meta.url)), 'utf8');
  assert.ok(readme.includes((await readFile(here('grpc.ts'), 'utf8')).trim()), 'packages/server-grpc/README.md shows grpc.ts verbatim');
});
