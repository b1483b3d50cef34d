/**
 * `logging.output: stdout` (the default) as an operator sees it: a line
 * logged by a long-running process reaches stdout promptly, without waiting
 * for more lines to fill a buffer or for the process to exit; and the lines
 * gathered when it exits are written, once each, whether stdout is a pipe or
 * a file.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { eventually } from '@switchyard/test-support';

const script = `
const { openLogDestination } = await import(${JSON.stringify(new URL('./logger.ts', import.meta.url).href)});
const { loggingConfigSchema } = await import(${JSON.stringify(new URL('../config/schemas.ts', import.meta.url).href)});
const output = process.argv[1];
const destination = openLogDestination(loggingConfigSchema.parse({ output }));
destination.write('{"level":"info","msg":"gateway_started"}\\n');
process.stderr.write('written\\n');
setInterval(() => {}, 60_000); // a server: it does not exit
`;

for (const output of ['stdout', 'stderr'] as const) {
  test(`logging.output ${output}: one line reaches the stream while the process keeps running`, async () => {
    const child = spawn(
      process.execPath,
      ['--conditions=@switchyard/source', `--import=${import.meta.resolve('tsx')}`, '--input-type=module', '-e', script, output],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    after(() => void child.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
    // tsx compiles the sources first, which on a busy machine takes a while.
    await eventually('the child to write its line', () => stderr.includes('written') || child.exitCode !== null, 60_000);
    assert.equal(child.exitCode, null, `the child exited: ${stderr}`);
    const stream = () => (output === 'stdout' ? stdout : stderr);
    await eventually(`the line on ${output}`, () => stream().includes('"msg":"gateway_started"'), 3000);
    assert.equal(child.exitCode, null, 'the line came while the process still ran, not at its exit');
  });
}

// Lines are gathered into batches (logger.ts): what is gathered when the process exits still goes out.
const exitingScript = `
const { openLogDestination } = await import(${JSON.stringify(new URL('./logger.ts', import.meta.url).href)});
const { loggingConfigSchema } = await import(${JSON.stringify(new URL('../config/schemas.ts', import.meta.url).href)});
const destination = openLogDestination(loggingConfigSchema.parse({ output: 'stdout' }));
for (let i = 0; i < 50; i++) destination.write('{"level":"info","msg":"line ' + i + '"}\\n');
process.exit(0);
`;

test('logging.output stdout: the lines gathered when the process exits are written, none lost', async () => {
  const child = spawn(
    process.execPath,
    ['--conditions=@switchyard/source', `--import=${import.meta.resolve('tsx')}`, '--input-type=module', '-e', exitingScript],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  after(() => void child.kill('SIGKILL'));
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0);
  const lines = stdout.split('\n').filter(Boolean);
  assert.equal(lines.length, 50, `all 50 lines reached stdout (${lines.length})`);
  assert.equal(lines.at(-1), '{"level":"info","msg":"line 49"}');
});

test('logging.output stdout to a file: a process that exits mid-stream leaves every line in it once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'stdout-file-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'gateway.log');
  const out = openSync(path, 'w');
  // 2,000 lines of about 60 bytes: several batches are written before the exit, and the rest at it.
  const script = exitingScript.replace('i < 50', 'i < 2000');
  const child = spawn(
    process.execPath,
    ['--conditions=@switchyard/source', `--import=${import.meta.resolve('tsx')}`, '--input-type=module', '-e', script],
    { stdio: ['ignore', out, 'pipe'] },
  );
  closeSync(out);
  after(() => void child.kill('SIGKILL'));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 0);
  const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
  assert.equal(lines.length, 2000, `each line once (${lines.length} lines; an asynchronous batch in flight at the exit was written twice)`);
  assert.equal(new Set(lines).size, 2000);
  assert.equal(lines.at(-1), '{"level":"info","msg":"line 1999"}');
});
