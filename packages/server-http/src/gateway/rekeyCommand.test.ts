import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { FileCredentialStore, generateEncryptionKey, parseEncryptionKey } from '@switchyard/credentials';
import { PostgresCredentialStore } from '@switchyard/credentials/postgres';
import { postgresForTests, sqlOnce as sql } from '@switchyard/test-support';
import { switchyard } from '../../test/switchyardCommand.js';

const OLD_KEY = generateEncryptionKey();
const NEW_KEY = generateEncryptionKey();
const newKeyId = parseEncryptionKey(NEW_KEY).id;

const dir = await mkdtemp(join(tmpdir(), 'switchyard-rekey-'));
after(() => rm(dir, { recursive: true, force: true }));

/** A gateway config with its file store in `<home>/auths`, encrypted with the old key. */
async function fileGateway(name: string): Promise<{ home: string; config: string; authDir: string }> {
  const home = join(dir, name);
  const authDir = join(home, 'auths');
  const store = await FileCredentialStore.open({ directory: authDir, encryption: { key: OLD_KEY } });
  for (const id of ['openai-a', 'openai-b']) await store.put(credential(id));
  await store.close();
  const config = join(home, 'config.yaml');
  await writeFile(config, `auth-dir: ./auths\nauth:\n  encryption:\n    enabled: true\n    key: ${OLD_KEY}\n`);
  return { home, config, authDir };
}

function credential(id: string) {
  const now = new Date().toISOString();
  return {
    id,
    provider: 'openai',
    type: 'api_key' as const,
    token: `sk-${id}-secret`,
    priority: 0,
    status: 'active' as const,
    quota: { limit: null, used: 0, remaining: null, period_start: null },
    created_at: now,
    updated_at: now,
    revision: 0,
  };
}

const keyIdsOf = async (authDir: string) => {
  const names = (await readdir(authDir)).filter((name) => name.endsWith('.json') && !name.startsWith('.')).sort();
  return Promise.all(names.map(async (name) => JSON.parse(await readFile(join(authDir, name), 'utf8')).encryption?.key_id as string));
};

const assertNoKeyPrinted = (run: { stdout: string; stderr: string }) => {
  for (const key of [OLD_KEY, NEW_KEY]) assert.equal(`${run.stdout}${run.stderr}`.includes(key), false, 'a key was printed');
};

describe('switchyard credentials rekey (file store)', () => {
  test('--help explains the options and the rotation procedure', async () => {
    const run = await switchyard(['credentials', 'rekey', '--help']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /--new-key-env NAME/);
    assert.match(run.stdout, /--new-key-file PATH/);
    assert.match(run.stdout, /never from the command\s+line/);
    assert.match(run.stdout, /put the old\s+one in auth\.encryption\.previous_keys/);
    assert.match(run.stdout, /remove the old key from previous_keys/);
    const top = await switchyard(['--help']);
    assert.match(top.stdout, /switchyard credentials rekey --config FILE/);
  });

  test('--new-key-env: every file moves to the new key, which alone reads them afterwards', async () => {
    const { config, authDir } = await fileGateway('env');
    const run = await switchyard(['credentials', 'rekey', '--config', config, '--new-key-env', 'ROTATED_KEY'], { ROTATED_KEY: NEW_KEY });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`rekeyed 2 credential file\\(s\\) to key ${newKeyId}; 0 were under it already\\.`));
    assert.match(run.stdout, /Next: set auth\.encryption\.key to the new key/);
    assertNoKeyPrinted(run);
    assert.deepEqual(await keyIdsOf(authDir), [newKeyId, newKeyId]);
    const store = await FileCredentialStore.open({ directory: authDir, encryption: { key: NEW_KEY }, watchExternal: false });
    assert.deepEqual(
      (await store.list()).map((c) => c.token),
      ['sk-openai-a-secret', 'sk-openai-b-secret'],
    );
    await store.close();
  });

  test('--new-key-file: reads the key from the file, and warns when others may read it', async () => {
    const { home, config, authDir } = await fileGateway('file');
    const keyFile = join(home, 'new.key');
    await writeFile(keyFile, `${NEW_KEY}\n`);
    await chmod(keyFile, 0o644);
    const run = await switchyard(['credentials', 'rekey', '--config', config, '--new-key-file', keyFile]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /readable by other users \(chmod 600 it\)/);
    assert.deepEqual(await keyIdsOf(authDir), [newKeyId, newKeyId]);
    assertNoKeyPrinted(run);
  });

  test('a file no configured key opens: exit 1 naming it, and no file is rewritten', async () => {
    const { config, authDir } = await fileGateway('foreign');
    const stranger = await FileCredentialStore.open({ directory: authDir, encryption: { key: generateEncryptionKey() } });
    await stranger.put(credential('openai-foreign'));
    await stranger.close();
    const before = await Promise.all((await readdir(authDir)).sort().map((name) => readFile(join(authDir, name), 'utf8')));
    const run = await switchyard(['credentials', 'rekey', '--config', config, '--new-key-env', 'K'], { K: NEW_KEY });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /rekey failed \(decryption_failed\): rekey stopped before writing anything: .*openai-foreign\.json/);
    const afterRun = await Promise.all((await readdir(authDir)).sort().map((name) => readFile(join(authDir, name), 'utf8')));
    assert.deepEqual(afterRun, before);
  });

  test('a missing, doubled, unset or malformed new key is a usage error (exit 2) that never echoes the value', async () => {
    const { config } = await fileGateway('usage');
    const neither = await switchyard(['credentials', 'rekey', '--config', config]);
    assert.equal(neither.code, 2);
    assert.match(neither.stderr, /exactly one of --new-key-env NAME or --new-key-file PATH/);
    const both = await switchyard(['credentials', 'rekey', '--config', config, '--new-key-env', 'K', '--new-key-file', config], {
      K: NEW_KEY,
    });
    assert.equal(both.code, 2);
    assert.match(both.stderr, /exactly one of/);
    const unset = await switchyard(['credentials', 'rekey', '--config', config, '--new-key-env', 'NOT_SET_ANYWHERE']);
    assert.equal(unset.code, 2);
    assert.match(unset.stderr, /environment variable NOT_SET_ANYWHERE is not set/);
    const malformed = 'not-a-key-but-a-secret-looking-string';
    const bad = await switchyard(['credentials', 'rekey', '--config', config, '--new-key-env', 'K'], { K: malformed });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /the new key in environment variable K is not usable: must be 32 bytes/);
    assert.equal(bad.stderr.includes(malformed), false);
    const argvKey = await switchyard(['credentials', 'rekey', '--config', config, '--new-key', NEW_KEY]);
    assert.equal(argvKey.code, 2, 'there is no option that takes the key itself');
    assert.match(argvKey.stderr, /Unknown option '--new-key'/);
  });
});

const postgres = await postgresForTests(import.meta.url);
describe('switchyard credentials rekey (PostgreSQL)', { skip: postgres.skip }, () => {
  test('moves every row of the cluster’s store to the new key, printing progress and the report', async () => {
    if (!postgres.available) return;
    const channel = `rekey_cli_${randomBytes(6).toString('hex')}`;
    const writer = await PostgresCredentialStore.open({
      connection: postgres.url,
      nodeId: 'writer',
      encryption: { key: OLD_KEY },
      events: { channel, reconcileIntervalMs: 0 },
    });
    for (const id of ['openai-a', 'openai-b', 'openai-c']) await writer.put(credential(id));
    await writer.close();
    const home = join(dir, 'cluster');
    const keyFile = join(home, 'new.key');
    await FileCredentialStore.open({ directory: home }).then((s) => s.close()); // creates the directory (mode 0700)
    await writeFile(keyFile, NEW_KEY, { mode: 0o600 });
    const config = join(home, 'config.yaml');
    await writeFile(
      config,
      [
        'auth:',
        '  encryption:',
        '    enabled: true',
        `    key: ${NEW_KEY}`,
        `    previous_keys: [${JSON.stringify(OLD_KEY)}]`,
        'cluster:',
        '  enabled: true',
        `  database_url: ${JSON.stringify(postgres.url)}`,
        `  auth_events_channel: ${channel}`,
        '',
      ].join('\n'),
    );

    const run = await switchyard(['credentials', 'rekey', '--config', config, '--new-key-file', keyFile, '--batch-size', '2']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, / {2}2\/3 rows moved\n {2}3\/3 rows moved\n/);
    assert.match(
      run.stdout,
      new RegExp(`rekeyed 3 credential row\\(s\\) to key ${newKeyId} in 2 batch\\(es\\); 0 were under it already\\.`),
    );
    assert.match(run.stdout, /remove the old key from auth\.encryption\.previous_keys/);
    assertNoKeyPrinted(run);
    const { rows } = await sql(postgres.url, "SELECT DISTINCT secrets->>'key_id' AS key_id FROM switchyard_credentials");
    assert.deepEqual(rows, [{ key_id: newKeyId }]);

    const again = await switchyard(['credentials', 'rekey', '--config', config, '--new-key-file', keyFile]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /rekeyed 0 credential row\(s\) .* 3 were under it already\./);
  });
});
