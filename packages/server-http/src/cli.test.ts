/**
 * The `switchyard` command's help: `--help` on the command and on each
 * subcommand prints usage on stdout and exits 0, as operators expect from
 * any CLI, instead of an "unknown option" error with exit code 2.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { main } from './cli.js';

async function run(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) }, new EventEmitter());
  return { code, stdout, stderr };
}

test('switchyard --help lists every subcommand and exits 0', async () => {
  const { code, stdout, stderr } = await run(['--help']);
  assert.equal(code, 0);
  assert.equal(stderr, '');
  for (const command of ['serve', 'login <flow>', 'config check', 'credentials rekey'])
    assert.match(stdout, new RegExp(`switchyard ${command}`));
});

for (const [argv, shows] of [
  [['serve', '--help'], /switchyard serve \[--config/],
  [['serve', '-h'], /--insecure allows/],
  [['serve', '--config', 'x.yaml', '--help'], /switchyard serve/],
  [['login', '--help'], /switchyard login <flow>/],
  [['login', 'code-assistant', '-h'], /--start-url URL --region REGION/],
  [['config', '--help'], /switchyard config check \[file\]/],
  [['config', 'check', '--help'], /Validates a config/],
] as const) {
  test(`switchyard ${argv.join(' ')} prints that command's usage and exits 0, starting nothing`, async () => {
    const { code, stdout, stderr } = await run([...argv]);
    assert.equal(stderr, '');
    assert.equal(code, 0);
    assert.match(stdout, shows);
    assert.match(stdout, /Exit codes:/);
  });
}

test('switchyard credentials --help still prints the rekey steps', async () => {
  const { code, stdout } = await run(['credentials', '--help']);
  assert.equal(code, 0);
  assert.match(stdout, /Rotating the key of a cluster/);
});

test('an unknown option is still a usage error (exit 2) with the usage on stderr', async () => {
  const { code, stderr } = await run(['serve', '--bogus']);
  assert.equal(code, 2);
  assert.match(stderr, /Unknown option '--bogus'/);
});

test('switchyard config schema prints the config’s JSON Schema; the example config names the checked-in copy', async () => {
  const { code, stdout, stderr } = await run(['config', 'schema']);
  assert.equal(code, 0);
  assert.equal(stderr, '');
  const schema = JSON.parse(stdout) as { $schema: string; properties: Record<string, { properties?: Record<string, unknown> }> };
  assert.match(schema.$schema, /json-schema\.org/);
  const example = await readFile(new URL('../../../examples/gateway/config.yaml', import.meta.url), 'utf8');
  // Every key the example config uses is one the schema describes.
  const walk = (value: unknown, node: { properties?: Record<string, unknown> } | undefined, path: string): void => {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !node?.properties) return;
    for (const [key, child] of Object.entries(value)) {
      if (path === 'providers') continue;
      assert.ok(key in node.properties, `${path}${key} is in the schema`);
      walk(child, node.properties[key] as { properties?: Record<string, unknown> }, `${path}${key}.`);
    }
  };
  walk(parseYaml(example), schema as never, '');
  assert.ok(schema.properties.server?.properties?.operations, 'nested blocks are described');
  assert.match(example.split('\n')[0]!, /^# yaml-language-server: \$schema=\.\/config\.schema\.json$/);
  const checkedIn = JSON.parse(await readFile(new URL('../../../examples/gateway/config.schema.json', import.meta.url), 'utf8'));
  assert.deepEqual(checkedIn, schema, 'examples/gateway/config.schema.json is current: regenerate it with `switchyard config schema`');
});
