import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { stagedLookup } from '@switchyard/test-support';
import { parseConfig } from './config/load.js';
import type { OutboundUrl } from './config/outboundUrls.js';
import { FileGuardedHostStore, type GuardedHostStore, GuardedHostsUnreadableError } from './guardedHostStore.js';
import { GuardedHosts } from './guardedHosts.js';

const dir = await mkdtemp(join(tmpdir(), 'guarded-store-'));
after(() => rm(dir, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(dir, `${++files}`, '.guarded-hosts.json');
const destination = (url: string): OutboundUrl => ({ path: 'providers.acme.base_url', value: url, url, protocols: ['http:', 'https:'] });
const dns = stagedLookup(() => '127.0.0.1');

describe('FileGuardedHostStore', () => {
  test('records hosts in a 0600 file that a new store (the next start) reads back, and forgets them again', async () => {
    const path = freshPath();
    await mkdir(join(path, '..'));
    const store = new FileGuardedHostStore(path);
    assert.deepEqual(await store.load(), [], 'no file: nothing guarded yet');
    await Promise.all([store.add(['b.test']), store.add(['a.test', 'b.test'])]);
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.deepEqual(JSON.parse(await readFile(path, 'utf8')), { format_version: 1, hosts: ['a.test', 'b.test'] });
    assert.deepEqual([...(await new FileGuardedHostStore(path).load())].sort(), ['a.test', 'b.test']);
    await store.forget(['a.test']);
    assert.deepEqual(await new FileGuardedHostStore(path).load(), ['b.test']);
  });

  test('a file that is not a list of hosts refuses the load instead of trusting every host', async () => {
    const cases: [string, (path: string) => Promise<void>][] = [
      ['truncated JSON', (path) => writeFile(path, '{"format_version": 1, "hosts": ["a.te')],
      ['another shape', (path) => writeFile(path, JSON.stringify({ format_version: 1, hosts: 'a.test' }))],
      ['a later format', (path) => writeFile(path, JSON.stringify({ format_version: 2, hosts: [] }))],
      ['a directory', (path) => mkdir(path)],
      ['a symlink', (path) => writeFile(`${path}.real`, '{"format_version":1,"hosts":[]}').then(() => symlink(`${path}.real`, path))],
    ];
    for (const [what, make] of cases) {
      const path = freshPath();
      await mkdir(join(path, '..'));
      await make(path);
      await assert.rejects(new FileGuardedHostStore(path).load(), GuardedHostsUnreadableError, what);
    }
  });
});

describe('GuardedHosts over a store', () => {
  /** A store that records calls and fails `add` on demand. */
  const recording = () => {
    const calls: string[] = [];
    let failAdd = false;
    const store: GuardedHostStore = {
      load: async () => ['stored.test'],
      add: async (hosts) => {
        calls.push(`add ${hosts.join(',')}`);
        if (failAdd) throw new Error('disk full');
      },
      forget: async (hosts) => {
        calls.push(`forget ${hosts.join(',')}`);
      },
    };
    return { store, calls, failing: () => (failAdd = true) };
  };

  test('admit records only hosts new to the set, and a failed record still guards them in this process', async () => {
    const { store, calls, failing } = recording();
    const guarded = new GuardedHosts({ policy: () => ({ allow: [] }), resolve: dns.lookup, store, hosts: ['Stored.Test.'] });
    assert.ok(guarded.has('stored.test'), 'the hosts given at start are guarded, in their compared form');
    await guarded.admit([destination('http://new.test/'), destination('http://stored.test/'), destination('http://93.184.216.34/')]);
    await guarded.admit([destination('http://new.test/v2')]);
    assert.deepEqual(calls, ['add new.test']);
    failing();
    await assert.rejects(guarded.admit([destination('http://other.test/')]), /disk full/);
    assert.ok(guarded.has('other.test'));
  });

  test('retain tells the store what it forgot; refresh guards only the stored hosts the config names', async () => {
    const { store, calls } = recording();
    const guarded = new GuardedHosts({ policy: () => ({ allow: [] }), resolve: dns.lookup, store, hosts: ['gone.test'] });
    const config = parseConfig('providers:\n  acme:\n    kind: openai-compatible\n    base_url: http://stored.test/v1\n    models: [m]\n');
    guarded.retain(config);
    assert.deepEqual(calls, ['forget gone.test']);
    assert.deepEqual(guarded.list(), []);
    await guarded.refresh(config);
    assert.deepEqual(guarded.list(), ['stored.test']);
  });
});
