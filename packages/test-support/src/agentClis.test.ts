/**
 * The pinned coding-agent CLIs are installed and run: each answers `--version` with the version
 * test-support's package.json pins (so a lockfile drift, or an install script that did not put a
 * native binary in place, fails here rather than deep inside a gateway test).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { AGENT_CLI_PACKAGES, type AgentCliName, requireAgentCli } from './binaries.js';

const run = promisify(execFile);
// A home of the test's own: a CLI must not read or write the user's (Gemini CLI writes ~/.gemini even for --version).
const home = mkdtempSync(join(tmpdir(), 'agent-cli-home-'));
after(() => rmSync(home, { recursive: true, force: true }));
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
      env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: join(home, '.config'), NO_COLOR: '1', CI: '1' },
    });
    assert.ok(stdout.includes(cli.version), `${name} --version printed ${JSON.stringify(stdout.trim())}`);
  });
}
