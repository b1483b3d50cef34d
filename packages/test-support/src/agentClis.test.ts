/**
 * The pinned coding-agent CLIs are installed and run: each answers `--version` with the version
 * test-support's package.json pins (so a lockfile drift, or an install script that did not put a
 * native binary in place, fails here rather than deep inside a gateway test).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { AGENT_CLI_PACKAGES, type AgentCliName, requireAgentCli } from './binaries.js';

const run = promisify(execFile);
const pinned = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { devDependencies: Record<string, string> }
).devDependencies;

for (const name of Object.keys(AGENT_CLI_PACKAGES) as AgentCliName[]) {
  const cli = requireAgentCli(name);
  test(`${name}: installed at the pinned version, and it runs`, { skip: cli.skip }, async () => {
    if (!cli.available) return;
    assert.equal(cli.version, pinned[cli.packageName], `${cli.packageName} is pinned exactly`);
    const [program, ...args] = cli.command;
    const { stdout } = await run(program!, [...args, '--version'], {
      timeout: 60_000,
      // No home of the user's: a CLI must not read or write the real one.
      env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', NO_COLOR: '1', CI: '1' },
    });
    assert.ok(stdout.includes(cli.version), `${name} --version printed ${JSON.stringify(stdout.trim())}`);
  });
}
