import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { controlledFlow } from '../../test/controlledFlow.js';
import { generateEncryptionKey } from '../encryption.js';
import type { CredentialsError } from '../errors.js';
import { FileSignInDirectory } from '../oauth/fileSignInDirectory.js';
import { MemorySignInDirectory } from '../oauth/signInDirectory.js';
import { AuthConfigSchema, openCredentials } from './authConfig.js';

const root = await mkdtemp(join(tmpdir(), 'credentials-config-'));
after(() => rm(root, { recursive: true, force: true }));

const { flow } = controlledFlow();

describe('auth config', () => {
  test('defaults are the documented ones', () => {
    assert.deepEqual(AuthConfigSchema.parse(undefined), {
      selection_strategy: 'round_robin',
      refresh: { enabled: true, check_interval: 300_000, refresh_lead_time: 600_000 },
      quota: { reset_schedule: {} },
      encryption: { enabled: false, previous_keys: [] },
    });
    const parsed = AuthConfigSchema.parse({
      refresh: { check_interval: '90s', refresh_lead_time: '1h30m' },
      quota: { reset_schedule: { openai: 'monthly' } },
    });
    assert.equal(parsed.refresh.check_interval, 90_000);
    assert.equal(parsed.refresh.refresh_lead_time, 5_400_000);
    assert.equal(parsed.quota.reset_schedule.openai, 'monthly');
  });

  test('every bad key is reported with its path', async () => {
    await assert.rejects(
      openCredentials({
        authDir: join(root, 'never'),
        auth: {
          selection_strategy: 'fastest' as 'priority',
          refresh: { check_interval: 'soon' },
          quota: { reset_schedule: { openai: 'weekly' as 'daily' } },
          encryption: { enabled: true },
        },
      }),
      (e: CredentialsError) => {
        assert.equal(e.code, 'invalid_config');
        assert.deepEqual(e.issues!.map((i) => i.field).sort(), [
          'auth.encryption.key',
          'auth.quota.reset_schedule.openai',
          'auth.refresh.check_interval',
          'auth.selection_strategy',
        ]);
        return true;
      },
    );
  });

  test('openCredentials runs a manager over an encrypted auth-dir that keeps quota usage across restarts', async () => {
    const authDir = join(root, 'auths');
    const auth = { selection_strategy: 'priority' as const, encryption: { enabled: true, key: generateEncryptionKey() } };
    const first = await openCredentials({ authDir, auth });
    assert.deepEqual(first.manager.flowNames(), ['cloud-coding-assistant', 'code-assistant']);
    const { id } = await first.manager.add({ provider: 'openai', type: 'api_key', token: 'sk-secret-config', quota: { limit: 1000 } });
    first.manager.pool('openai').reportSuccess(id, { inputTokens: 300, outputTokens: 12 });
    await first.close();
    assert.ok(!(await readFile(join(authDir, `${id}.json`), 'utf8')).includes('sk-secret-config'));
    assert.equal((await stat(join(authDir, '.quota.json'))).mode & 0o777, 0o600);
    const second = await openCredentials({ authDir, auth });
    assert.equal(second.manager.describe(id).quota.used, 312);
    assert.equal(second.manager.pool('openai').strategy, 'priority');
    assert.equal(second.manager.pool('openai').acquire().token, 'sk-secret-config');
    await second.close();
  });

  test('a restarted openCredentials answers the sign-ins pending before as interrupted, after a crash or a clean stop', async () => {
    const authDir = join(root, 'sign-ins');
    const open = () => openCredentials({ authDir, flows: [flow], auth: { refresh: { enabled: false } } });
    const crashed = await open();
    const beforeCrash = await crashed.manager.signIns.start('acme');
    // The next start on the directory while this one still runs is what a restart after a crash sees: a pending record.
    const restarted = await open();
    const afterCrash = await restarted.manager.signIns.status(beforeCrash.id);
    assert.deepEqual([afterCrash.state, afterCrash.error?.code], ['failed', 'interrupted']);
    await crashed.close();

    const beforeStop = await restarted.manager.signIns.start('acme');
    await restarted.close();
    const again = await open();
    const afterStop = await again.manager.signIns.status(beforeStop.id);
    assert.deepEqual([afterStop.state, afterStop.error?.code], ['failed', 'interrupted']);
    assert.equal((await stat(join(authDir, '.sign-ins'))).mode & 0o777, 0o700);
    await again.close();
  });

  test("a process with a sign-in directory of its own (switchyard login) leaves the auth-dir's sign-ins as they are", async () => {
    const authDir = join(root, 'beside');
    const auth = { refresh: { enabled: false } };
    const gateway = await openCredentials({ authDir, flows: [flow], auth });
    const pending = await gateway.manager.signIns.start('acme');
    const login = await openCredentials({ authDir, flows: [flow], auth, signInDirectory: new MemorySignInDirectory() });
    const beside = await login.manager.signIns.start('acme');
    const files = await FileSignInDirectory.open(join(authDir, '.sign-ins'));
    assert.equal((await files.get(pending.id, Date.now()))?.state, 'pending', "the gateway's sign-in is not interrupted");
    assert.equal(await files.get(beside.id, Date.now()), undefined, "the login's sign-in stays in its own process");
    await login.close();
    await gateway.close();
    await files.close();
  });
});
