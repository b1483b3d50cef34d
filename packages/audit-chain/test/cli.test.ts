import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { main } from '../src/cli.js';
import { runCli } from './support.js';

const dir = await mkdtemp(join(tmpdir(), 'audit-cli-'));
after(() => rm(dir, { recursive: true, force: true }));

async function cli(args: string[], stdin = '') {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdin: Readable.from([Buffer.from(stdin)]),
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  });
  return { code, stdout, stderr };
}

const entries = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => JSON.stringify({ actor: 'alice', action: 'deploy', n: from + i })).join('\n');

describe('audit-chain CLI', () => {
  const log = join(dir, 'audit.jsonl');
  const keys = join(dir, 'keys');

  test('--help lists every command; an unknown command exits 2', async () => {
    const help = await cli(['--help']);
    assert.equal(help.code, 0);
    for (const name of ['verify', 'append', 'keygen', 'checkpoint', 'export-checkpoint', 'prove', 'verify-proof', 'repair']) {
      assert.match(help.stdout, new RegExp(`\\b${name}\\b`));
    }
    const unknown = await cli(['frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command/);
    assert.equal((await cli([])).code, 2);
  });

  test('append fills id, timestamp, prev_hash and hash, and prints the stored lines', async () => {
    const run = await cli(['append', log, '--origin', 'cli-demo'], entries(5));
    assert.equal(run.code, 0, run.stderr);
    const printed = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      printed.map((e) => e.id),
      [1, 2, 3, 4, 5],
    );
    assert.ok(printed.every((e) => /^[0-9a-f]{64}$/.test(e.hash) && typeof e.timestamp === 'string'));
    // Byte for byte what was written: a printed line can be shipped and verified elsewhere.
    assert.equal(run.stdout, await readFile(log, 'utf8'));
  });

  test('append keeps a given timestamp and refuses bad input before writing anything', async () => {
    const kept = await cli(['append', log, '--origin', 'cli-demo'], '{"timestamp":"2026-01-02T03:04:05Z","x":1}');
    assert.equal(JSON.parse(kept.stdout).timestamp, '2026-01-02T03:04:05Z');
    const before = await readFile(log, 'utf8');
    const bad = await cli(['append', log, '--origin', 'cli-demo'], `${entries(2)}\nnot json`);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /line 3 is not JSON/);
    const reserved = await cli(['append', log, '--origin', 'cli-demo'], '{"hash":"x"}');
    assert.equal(reserved.code, 2);
    assert.equal(await readFile(log, 'utf8'), before);
  });

  test('append under another origin than the log was started with is refused', async () => {
    const run = await cli(['append', log, '--origin', 'someone-else'], entries(1));
    assert.equal(run.code, 2);
    assert.match(run.stderr, /origin/);
  });

  test('verify: 0 and a summary when valid, --json prints one object', async () => {
    const human = await cli(['verify', log, '--origin', 'cli-demo']);
    assert.equal(human.code, 0, human.stdout + human.stderr);
    assert.match(human.stdout, /valid: 6 entries/);
    const json = await cli(['verify', log, '--origin', 'cli-demo', '--json']);
    const result = JSON.parse(json.stdout);
    assert.equal(result.valid, true);
    assert.equal(result.entries_verified, 6);
    assert.equal(result.first_invalid_id, null);
    assert.match(result.root, /^[0-9a-f]{64}$/);
  });

  test('verify: 1 and the bad entry when tampered; 2 for usage and I/O errors', async () => {
    const tampered = join(dir, 'tampered.jsonl');
    await writeFile(tampered, (await readFile(log, 'utf8')).replace('"n":3', '"n":4'));
    const run = await cli(['verify', tampered, '--origin', 'cli-demo', '--json']);
    assert.equal(run.code, 1);
    const result = JSON.parse(run.stdout);
    assert.equal(result.error_code, 'HASH_MISMATCH');
    assert.equal(result.first_invalid_id, 4);
    assert.equal((await cli(['verify', join(dir, 'missing.jsonl')])).code, 2);
    assert.equal((await cli(['verify', log, '--scheme', 'md5'])).code, 2);
    assert.equal((await cli(['verify', log, '--bogus'])).code, 2);
    assert.equal((await cli(['verify'])).code, 2);
  });

  test('keygen writes a private key with mode 0600, a public key and a verifier key', async () => {
    const run = await cli(['keygen', '--name', 'audit.example', '--out', keys]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(statSync(join(keys, 'audit.example.key')).mode & 0o777, 0o600);
    assert.ok(existsSync(join(keys, 'audit.example.pub')));
    assert.match(await readFile(join(keys, 'audit.example.vkey'), 'utf8'), /^audit\.example\+[0-9a-f]{8}\+/);
    const again = await cli(['keygen', '--name', 'audit.example', '--out', keys]);
    assert.equal(again.code, 2, 'refuses to overwrite a key without --force');
  });

  test('checkpoint signs the head, stores it in the sidecar, and verify checks it', async () => {
    const run = await cli(['checkpoint', log, '--origin', 'cli-demo', '--key', join(keys, 'audit.example.key'), '--name', 'audit.example']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^cli-demo\n6\n[A-Za-z0-9+/]{43}=\n\n— audit\.example [A-Za-z0-9+/=]+\n$/);
    assert.ok(existsSync(`${log}.checkpoints`));
    for (const key of ['audit.example.vkey', 'audit.example.pub']) {
      const verified = await cli(['verify', log, '--public-key', join(keys, key), '--json']);
      assert.equal(JSON.parse(verified.stdout).valid, true, verified.stdout);
      assert.equal(JSON.parse(verified.stdout).origin, 'cli-demo');
    }
  });

  test('export-checkpoint prints the note verbatim; verify --checkpoint catches truncation', async () => {
    const note = join(dir, 'head.note');
    assert.equal((await cli(['export-checkpoint', log, '--out', note])).code, 0);
    const truncated = join(dir, 'truncated.jsonl');
    await writeFile(truncated, `${(await readFile(log, 'utf8')).split('\n').slice(0, 4).join('\n')}\n`);
    const run = await cli(['verify', truncated, '--checkpoint', note, '--public-key', join(keys, 'audit.example.vkey'), '--json']);
    assert.equal(run.code, 1);
    assert.equal(JSON.parse(run.stdout).error_code, 'TRUNCATED');
    const noKey = await cli(['verify', truncated, '--checkpoint', note]);
    assert.equal(noKey.code, 2);
  });

  test('--trusted-state is created on first use, advanced, and refuses a rollback', async () => {
    const state = join(dir, 'trusted.json');
    // Without an origin the state could not record which log it is for: refused, instead of exiting 0 and writing nothing.
    const anonymous = await cli(['verify', log, '--trusted-state', state]);
    assert.equal(anonymous.code, 2);
    assert.match(anonymous.stderr, /--origin/);
    assert.equal(existsSync(state), false);
    assert.equal((await cli(['verify', log, '--origin', 'cli-demo', '--trusted-state', state])).code, 0);
    assert.equal(JSON.parse(await readFile(state, 'utf8')).size, 6);
    await cli(['append', log, '--origin', 'cli-demo'], entries(2, 100));
    assert.equal((await cli(['verify', log, '--origin', 'cli-demo', '--trusted-state', state])).code, 0);
    assert.equal(JSON.parse(await readFile(state, 'utf8')).size, 8);
    const old = join(dir, 'old.jsonl');
    await writeFile(old, `${(await readFile(log, 'utf8')).split('\n').slice(0, 6).join('\n')}\n`);
    const run = await cli(['verify', old, '--origin', 'cli-demo', '--trusted-state', state, '--json']);
    assert.equal(run.code, 1);
    assert.equal(JSON.parse(run.stdout).error_code, 'TRUNCATED');
    assert.equal(JSON.parse(await readFile(state, 'utf8')).size, 8, 'a failed run never moves the trusted state');
  });

  test('prove and verify-proof: inclusion and consistency proofs round-trip', async () => {
    const proof = await cli(['prove', log, '--index', '2']);
    assert.equal(proof.code, 0, proof.stderr);
    const parsed = JSON.parse(proof.stdout);
    assert.equal(parsed.leaf_index, 2);
    assert.equal(parsed.tree_size, 8);
    const ok = await cli(['verify-proof'], proof.stdout);
    assert.deepEqual(JSON.parse(ok.stdout), { valid: true, kind: 'inclusion' });
    const wrongRoot = await cli(['verify-proof', '--root', 'ab'.repeat(32)], proof.stdout);
    assert.equal(wrongRoot.code, 1);
    const consistency = await cli(['prove', log, '--first', '3', '--size', '7']);
    const checked = await cli(['verify-proof'], consistency.stdout);
    assert.deepEqual(JSON.parse(checked.stdout), { valid: true, kind: 'consistency' });
    assert.equal((await cli(['prove', log, '--index', '99'])).code, 2);
    assert.equal((await cli(['prove', log])).code, 2);
    assert.equal((await cli(['verify-proof'], 'nope')).code, 2);
  });

  test('repair fixes a torn tail', async () => {
    const torn = join(dir, 'torn.jsonl');
    await writeFile(torn, `${await readFile(log, 'utf8')}{"partial":`);
    assert.equal((await cli(['verify', torn, '--origin', 'cli-demo', '--json'])).code, 1);
    const run = await cli(['repair', torn]);
    assert.equal(run.code, 0);
    assert.match(run.stdout, /^truncated/);
    assert.equal((await cli(['verify', torn, '--origin', 'cli-demo'])).code, 0);
  });

  test('verify --scheme agileplus-v1 checks AgilePlus chains', async () => {
    const { agilePlusHash, AGILEPLUS_GENESIS } = await import('../src/index.js');
    let prev = AGILEPLUS_GENESIS;
    const rows = [1, 2, 3].map((id) => {
      const row = {
        id,
        feature_id: 7,
        wp_id: id === 2 ? 3 : null,
        timestamp: `2026-01-0${id}T00:00:00Z`,
        actor: 'bot',
        transition: 'PLANNED -> DOING',
        evidence_refs: [],
        prev_hash: prev,
        hash: '',
      };
      row.hash = agilePlusHash(row);
      prev = row.hash;
      return JSON.stringify(row);
    });
    const file = join(dir, 'agileplus.jsonl');
    await writeFile(file, `${rows.join('\n')}\n`);
    const run = await cli(['verify', file, '--scheme', 'agileplus-v1', '--json']);
    assert.equal(JSON.parse(run.stdout).valid, true, run.stdout);
  });

  test('the installed bin runs as a real process with the same exit codes', async () => {
    const ok = await runCli(['verify', log, '--origin', 'cli-demo']);
    assert.equal(ok.code, 0, ok.stderr);
    const bad = await runCli(['verify', log, '--origin', 'wrong']);
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /GENESIS_MISMATCH/);
  });
});

describe('audit-chain keygen with C2SP names', () => {
  test('keygen --name example.com/log writes its files inside --out, and the key signs and verifies checkpoints', async () => {
    const keys = join(dir, 'c2sp-keys');
    const run = await cli(['keygen', '--name', 'example.com/log', '--out', keys]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(statSync(join(keys, 'example.com_log.key')).mode & 0o777, 0o600);
    assert.match(await readFile(join(keys, 'example.com_log.vkey'), 'utf8'), /^example\.com\/log\+[0-9a-f]{8}\+/);
    const log = join(dir, 'c2sp.jsonl');
    assert.equal((await cli(['append', log, '--origin', 'example.com/log'], entries(3))).code, 0);
    const signed = await cli([
      'checkpoint',
      log,
      '--origin',
      'example.com/log',
      '--key',
      join(keys, 'example.com_log.key'),
      '--name',
      'example.com/log',
    ]);
    assert.equal(signed.code, 0, signed.stderr);
    assert.match(signed.stdout, /— example\.com\/log /);
    const verified = await cli(['verify', log, '--public-key', join(keys, 'example.com_log.vkey'), '--json']);
    assert.equal(JSON.parse(verified.stdout).valid, true, verified.stdout);
  });

  test('a name that would climb out of --out stays inside it', async () => {
    // Two levels below a directory of this test's own, so where an escape would land is fresh too
    // (never a shared /tmp, where another run's file would answer for this one).
    const keys = join(dir, 'climb', 'out', 'keys');
    const run = await cli(['keygen', '--name', '../../escaped', '--out', keys]);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(existsSync(join(keys, '.._.._escaped.key')));
    assert.equal(existsSync(join(keys, '..', '..', 'escaped.key')), false);
  });
});
