/**
 * `yard mcp` with the official MCP SDK client over stdio: the tool is
 * listed with its JSON schema (valid JSON Schema, with every argument's
 * default), `dispatch_command` runs a subcommand (and is audit-logged), and
 * a failing subcommand is an `isError` result.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BUILTIN_SUBCOMMANDS, SubcommandRegistry } from '@switchyard/workflow';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { auditLines, type TempRepo, tempRepo, YARD, yard } from './helpers.js';

let repo: TempRepo;
let client: Client;

before(async () => {
  repo = await tempRepo();
  assert.equal((await yard(['specify', '001-login', '--title', 'Log in'], { cwd: repo.root })).code, 0);
  client = new Client({ name: 'yard-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [...YARD.args, 'mcp'],
      cwd: repo.root,
      env: { ...(process.env as Record<string, string>), ...YARD.env },
      stderr: 'pipe',
    }),
  );
});
after(async () => {
  await client?.close();
  await repo.cleanup();
});

test('the server lists dispatch_command with a schema generated from the subcommands', async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((t) => t.name),
    ['dispatch_command'],
  );
  const schema = tools[0]!.inputSchema as unknown as {
    properties: { args: { oneOf?: { properties: { command: { const: string } } }[]; anyOf?: unknown[] } };
  };
  const variants = (schema.properties.args.oneOf ?? schema.properties.args.anyOf) as {
    properties: { command: { const: string } };
    required?: string[];
  }[];
  const write = variants.find((v) => v.properties.command.const === 'artifact:write')!;
  assert.deepEqual(write.required?.sort(), ['command', 'feature_slug', 'relative_path']);
});

test('the tool schema is valid JSON Schema 2020-12 and states every default, each one valid for its argument', async () => {
  const { tools } = await client.listTools();
  const schema = tools[0]!.inputSchema as Record<string, unknown>;
  // Strict: an unknown keyword or a malformed schema throws here.
  const ajv = new Ajv2020({ strict: true, strictTypes: false, strictRequired: true, allErrors: true });
  const validate = ajv.compile(schema);
  assert.equal(validate({ args: { command: 'branch:delete', name: 'x', force: true } }), true, ajv.errorsText(validate.errors));
  assert.equal(validate({ args: { command: 'branch:delete', force: true } }), false, 'name is required');

  const variants = (schema.properties as { args: { oneOf?: unknown[]; anyOf?: unknown[] } }).args;
  const byCommand = new Map(
    ((variants.oneOf ?? variants.anyOf) as { properties: Record<string, Record<string, unknown>> }[]).map((v) => [
      v.properties.command!.const as string,
      v.properties,
    ]),
  );
  assert.deepEqual(byCommand.get('branch:delete')!.force, { type: 'boolean', description: 'delete even when not merged', default: false });
  assert.deepEqual(byCommand.get('diff:stat')!.paths!.default, []);
  const registry = new SubcommandRegistry(BUILTIN_SUBCOMMANDS);
  let defaults = 0;
  for (const def of registry.list()) {
    for (const arg of registry.describe(def.name).args.filter((a) => a.default !== undefined)) {
      const property = byCommand.get(def.name)![arg.name]!;
      assert.deepEqual(property.default, arg.default, `${def.name} ${arg.name}`);
      const { default: value, ...rest } = property;
      assert.ok(ajv.validate(rest, value), `${def.name} ${arg.name}: the default is a valid value: ${ajv.errorsText()}`);
      defaults++;
    }
  }
  assert.ok(defaults > 30, `${defaults} defaults checked`);
});

test('dispatch_command runs a subcommand, fills feature_slug, and writes one audit line', async () => {
  const before = (await auditLines(repo.root)).length;
  const result = await client.callTool({
    name: 'dispatch_command',
    arguments: { feature_slug: '001-login', args: { command: 'artifact:write', relative_path: 'spec.md', content: '# Spec\n' } },
  });
  assert.equal(result.isError, false);
  const body = JSON.parse((result.content as { type: string; text: string }[])[0]!.text) as { ok: boolean; result: { path: string } };
  assert.deepEqual([body.ok, body.result.path], [true, '001-login/spec.md']);
  assert.deepEqual((result.structuredContent as { command: string }).command, 'artifact:write');
  const verify = await client.callTool({
    name: 'dispatch_command',
    arguments: { feature_slug: '001-login', args: { command: 'audit:verify' } },
  });
  assert.equal((verify.structuredContent as { result: { valid: boolean } }).result.valid, true);
  const lines = await auditLines(repo.root);
  assert.deepEqual(
    lines.slice(before).map((l) => [l.command, l.exit_code]),
    [
      ['artifact:write', 0],
      ['audit:verify', 0],
    ],
  );
});

test('a failing subcommand is an error result with its code, and is audited too', async () => {
  const result = await client.callTool({
    name: 'dispatch_command',
    arguments: { args: { command: 'branch:create', name: '--upload-pack=x' } },
  });
  assert.equal(result.isError, true);
  const body = result.structuredContent as { ok: boolean; exit_code: number; error: { code: string } };
  assert.deepEqual([body.ok, body.exit_code, body.error.code], [false, 2, 'unsafe_argument']);
  assert.equal((await auditLines(repo.root)).at(-1)!.command, 'branch:create');
});
