/**
 * A gateway that cannot bind its port (another process has it) fails its
 * start with the address and the cause, and closes what the start had
 * opened before the bind: the usage store's database, the client keys, the
 * credentials and their timers. Nothing of it is left in the process.
 */
import assert from 'node:assert/strict';
import { readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { eventually } from '@switchyard/test-support';
import { parseConfig } from './config/load.js';
import { Gateway } from './gateway.js';

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const yaml = (dir: string, port: number) => `
host: 127.0.0.1
port: ${port}
auth-dir: ${dir}/auths
api-keys: [sk-client]
providers:
  alpha: { kind: mock, models: [demo-model] }
metrics: { enabled: false }
`;

async function startFrom(port: number) {
  const dir = await mkdtemp(join(tmpdir(), 'gateway-listen-'));
  dirs.push(dir);
  const text = yaml(dir, port);
  const configPath = join(dir, 'config.yaml');
  await writeFile(configPath, text);
  return { dir, start: () => Gateway.start({ config: parseConfig(text), configPath, logDestination: { write() {} } }) };
}

/** The files this process holds open under `dir` (the usage database, the client keys' file, …). */
function openFilesUnder(dir: string): string[] {
  const open: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir)) open.push(target);
    } catch {
      // The descriptor readdir itself used, closed by now.
    }
  }
  return open;
}

/** Active handles and requests by kind (timers, sockets, servers, …). */
const resources = () => process.getActiveResourcesInfo();

/** Whether `now` has no more of any kind than `before` had (a close of the warm-up may still have been in flight then). */
function noneAdded(before: string[], now: string[]): boolean {
  const count = (list: string[], kind: string) => list.filter((k) => k === kind).length;
  return now.every((kind) => count(now, kind) <= count(before, kind));
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

test('a port already taken fails the start with host:port and EADDRINUSE, and the start leaves nothing open', async () => {
  // One start and close first: what the first start loads for good (modules, pools) is not a leak of the failed one.
  const warm = await startFrom(0);
  const running = await warm.start();
  assert.ok(openFilesUnder(warm.dir).length > 0, 'a running gateway holds its files open (the check can see them)');
  await running.close();

  const taken = createServer();
  const port = await listen(taken);
  try {
    const failing = await startFrom(port);
    const before = resources();
    await assert.rejects(failing.start(), (error: Error) => {
      assert.match(error.message, new RegExp(`^the gateway cannot listen on 127\\.0\\.0\\.1:${port}: EADDRINUSE, the address is in use`));
      assert.equal((error as NodeJS.ErrnoException).code, 'EADDRINUSE');
      return true;
    });
    await eventually('the failed start to close the files it opened', () => openFilesUnder(failing.dir).length === 0);
    await eventually('the failed start to leave no handle behind', () => noneAdded(before, resources()));
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
});
