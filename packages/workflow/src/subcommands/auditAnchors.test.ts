/**
 * Issue 24, item 11: what anchors a feature's audit chain (the checkpoint signing key, a signed
 * checkpoint, a trusted state) can live outside the repository, and `audit:verify` catches a
 * truncated chain and one re-hashed from the start against them.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { generateCheckpointKeys, verifyCheckpoint } from '@switchyard/audit-chain';
import { makeWorkflow } from '../../test/helpers.js';
import { ArtifactStore } from '../git/artifactStore.js';
import { GitRepository } from '../git/gitRepository.js';
import { EXIT_CODES } from './exitCodes.js';
import { BUILTIN_SUBCOMMANDS } from './index.js';
import { type SubcommandContext, SubcommandRegistry } from './registry.js';
import { runSubcommand } from './runSubcommand.js';
import { SubcommandAuditLog } from './subcommandAuditLog.js';

const dirs: string[] = [];
after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));
async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

const registry = new SubcommandRegistry(BUILTIN_SUBCOMMANDS);
const keys = generateCheckpointKeys('example.com/shop');
/** Outside every repository, the operator's trust directory (YARD_TRUST_DIR): what the agent must not reach. */
const vault = await tempDir('vault-');
const keyFile = join(vault, 'checkpoint.key');
await writeFile(keyFile, keys.privateKeyPem, { mode: 0o600 });

/** A repository and a workflow whose feature `f` has `updates` title changes (deterministic: fake clock). */
async function setup(updates: string[], env: Record<string, string> = {}, actor = 'alice') {
  const root = await tempDir('anchors-repo-');
  await mkdir(join(root, '.agileplus'), { recursive: true });
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
  for (const title of updates) await workflow.updateFeature('f', { title, actor });
  const ctx: SubcommandContext = {
    workflow,
    git: new GitRepository(root),
    artifacts: new ArtifactStore(join(root, '.agileplus', 'artifacts')),
    actor: 'alice',
    env: { YARD_TRUST_DIR: vault, ...env },
  };
  const log = await SubcommandAuditLog.open(root, { repoName: 'shop' });
  after(() => log.close());
  const run = (command: string, args: Record<string, unknown>) => runSubcommand(registry, log, command, args, ctx);
  return { run, workflow };
}

test('audit:checkpoint signs with a key file outside the repository', async () => {
  const { run } = await setup(['F2']);
  const outcome = await run('audit:checkpoint', { feature_slug: 'f', key_file: keyFile, key_name: 'example.com/shop' });
  assert.equal(outcome.exit_code, EXIT_CODES.ok, outcome.error?.message);
  const { note, size } = outcome.result as { note: string; size: number };
  const checked = await verifyCheckpoint(note, { verifiers: [await verifierOf()] });
  assert.equal(checked.checkpoint?.size, size);
});

test('audit:checkpoint signs with a key from a YARD_CHECKPOINT_KEY* variable, and no other variable', async () => {
  const { run } = await setup([], { YARD_CHECKPOINT_KEY: keys.privateKeyPem, HOME: '/home/alice' });
  const signed = await run('audit:checkpoint', { feature_slug: 'f', key_env: 'YARD_CHECKPOINT_KEY', key_name: 'example.com/shop' });
  assert.equal(signed.exit_code, EXIT_CODES.ok, signed.error?.message);
  await verifyCheckpoint((signed.result as { note: string }).note, { verifiers: [await verifierOf()] });
  const other = await run('audit:checkpoint', { feature_slug: 'f', key_env: 'HOME', key_name: 'example.com/shop' });
  assert.equal(other.exit_code, EXIT_CODES.usage);
  assert.equal(other.error?.details?.field, 'key_env');
  const unset = await run('audit:checkpoint', { feature_slug: 'f', key_env: 'YARD_CHECKPOINT_KEY_OTHER', key_name: 'example.com/shop' });
  assert.equal(unset.exit_code, EXIT_CODES.not_found);
});

test('an absolute key path outside YARD_TRUST_DIR, or with none set, is refused; so is a symlink, a directory or a large file in it', async () => {
  const { run } = await setup([]);
  const elsewhere = await tempDir('elsewhere-');
  await writeFile(join(elsewhere, 'other.key'), keys.privateKeyPem);
  const outside = await run('audit:checkpoint', { feature_slug: 'f', key_file: join(elsewhere, 'other.key'), key_name: 'k' });
  assert.deepEqual([outside.exit_code, outside.error?.code], [EXIT_CODES.usage, 'path_escape']);
  const climbing = await run('audit:checkpoint', { feature_slug: 'f', key_file: join(vault, '..', 'etc', 'shadow'), key_name: 'k' });
  assert.deepEqual([climbing.exit_code, climbing.error?.code], [EXIT_CODES.usage, 'path_escape']);

  const root = await tempDir('no-trust-dir-');
  const { workflow } = makeWorkflow();
  await workflow.createFeature({ slug: 'f', title: 'F', actor: 'alice' });
  const log = await SubcommandAuditLog.open(root, { repoName: 'shop' });
  after(() => log.close());
  const ctx = { workflow, git: new GitRepository(root), actor: 'alice', env: {} } as unknown as SubcommandContext;
  const unset = await runSubcommand(registry, log, 'audit:checkpoint', { feature_slug: 'f', key_file: keyFile, key_name: 'k' }, ctx);
  assert.deepEqual(
    [unset.exit_code, unset.error?.code],
    [EXIT_CODES.usage, 'path_escape'],
    'no trust directory: nothing outside the repository',
  );

  const big = join(vault, 'big.key');
  await writeFile(big, 'secret-looking-content '.repeat(5_000));
  await mkdir(join(vault, 'subdir'), { recursive: true });
  await symlink(join(elsewhere, 'other.key'), join(vault, 'link.key'));
  for (const key_file of [join(vault, 'subdir'), big, join(vault, 'link.key')]) {
    const outcome = await run('audit:checkpoint', { feature_slug: 'f', key_file, key_name: 'example.com/shop' });
    assert.equal(outcome.exit_code, EXIT_CODES.usage, `${key_file}: ${outcome.error?.message}`);
    assert.doesNotMatch(JSON.stringify(outcome), /secret-looking/);
  }
});

async function verifierOf() {
  const { createNoteVerifier } = await import('@switchyard/audit-chain');
  return createNoteVerifier(keys.verifierKey);
}

test('audit:verify against a signed checkpoint and a trusted state outside the repository catches truncation and a full re-hash', async () => {
  // The real history: three entries, checkpointed and its state kept in the vault.
  const real = await setup(['F2', 'F3']);
  const signed = await real.run('audit:checkpoint', { feature_slug: 'f', key_file: keyFile, key_name: 'example.com/shop' });
  const { origin, size, root, note } = signed.result as { origin: string; size: number; root: string; note: string };
  const checkpointFile = join(vault, 'f.checkpoint');
  const trustedFile = join(vault, 'f.trusted.json');
  await writeFile(checkpointFile, note);
  await writeFile(trustedFile, JSON.stringify({ origin, size, root }));
  const anchors = { checkpoint_file: checkpointFile, public_key: keys.verifierKey, trusted_state: trustedFile };
  const verdict = async (workflow: Awaited<ReturnType<typeof setup>>, extra: Record<string, unknown>) => {
    const outcome = await workflow.run('audit:verify', { feature_slug: 'f', ...extra });
    assert.equal(outcome.exit_code, EXIT_CODES.ok, outcome.error?.message);
    return outcome.result as { valid: boolean; error_code: string | null };
  };
  assert.equal((await verdict(real, anchors)).valid, true);

  // Truncated: the last entry dropped. The chain alone still verifies; the anchors do not.
  const truncated = await setup(['F2']);
  assert.equal((await verdict(truncated, {})).valid, true, 'the chain alone cannot tell');
  for (const anchor of [{ checkpoint_file: checkpointFile, public_key: keys.verifierKey }, { trusted_state: trustedFile }]) {
    const result = await verdict(truncated, anchor);
    assert.equal(result.valid, false, JSON.stringify(anchor));
  }

  // Re-hashed from the start: as long, every hash recomputed over a rewritten history (other actors).
  const rehashed = await setup(['F2', 'F3'], {}, 'mallory');
  assert.equal((await verdict(rehashed, {})).valid, true, 'the chain alone cannot tell');
  for (const anchor of [{ checkpoint_file: checkpointFile, public_key: join(vault, 'shop.vkey') }, { trusted_state: trustedFile }]) {
    if (anchor.public_key) await writeFile(anchor.public_key, `${keys.verifierKey}\n`);
    const result = await verdict(rehashed, anchor);
    assert.equal(result.valid, false, JSON.stringify(anchor));
  }

  const unsigned = await real.run('audit:verify', { feature_slug: 'f', checkpoint_file: checkpointFile });
  assert.equal(unsigned.exit_code, EXIT_CODES.usage, 'a checkpoint needs a key to check it against');
});
