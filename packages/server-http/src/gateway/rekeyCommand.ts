/**
 * @module rekeyCommand
 * `switchyard credentials rekey`: re-encrypts every stored credential under
 * a new key, in the store the config names (the files in `auth-dir`, or the
 * cluster's PostgreSQL table), through the credentials package's own
 * `rekey`. The new key comes from an environment variable or a file, never
 * from argv, which any user on the host can read in `ps`. The current keys
 * come from the config's `auth.encryption`.
 */
import { readFile, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { CredentialsError, type EncryptionKey, FileCredentialStore, parseEncryptionKey } from '@switchyard/credentials';
import { PostgresCredentialStore } from '@switchyard/credentials/postgres';
import { loadConfigFile } from './config/load.js';
import type { GatewayConfig } from './config/schema.js';
import { resolveAuthDir } from './credentials.js';

/** Where the command writes, and where it finds `--new-key-env`. */
export interface RekeyIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  knownKinds: readonly string[];
}

/** A mistake in how the command was called, or a key that cannot be read (exit code 2). */
export class RekeyUsageError extends Error {
  override name = 'RekeyUsageError';
}

export const REKEY_USAGE = `switchyard credentials rekey: re-encrypt every stored credential under a new key

Usage:
  switchyard credentials rekey --config FILE (--new-key-env NAME | --new-key-file PATH)
                               [--batch-size N]

  Opens the credential store FILE names: the files in auth-dir or, with
  cluster.enabled, the rows in PostgreSQL. The current key and
  auth.encryption.previous_keys in FILE read the credentials; the new key
  (32 bytes: 44 base64 characters or 64 hex digits) is read from the
  environment variable NAME or from the file PATH, never from the command
  line, where ps shows it. Nothing is written unless every credential can
  be decrypted first; the rows or files that cannot are named.

  --new-key-env NAME    read the new key from environment variable NAME
  --new-key-file PATH   read the new key from a file (mode 0600, please)
  --batch-size N        PostgreSQL: rows per transaction (default 100)

Rotating the key of a cluster (PostgreSQL), with every node serving:
  1. Make a key: node -e "console.log(require('node:crypto').randomBytes(32).toString('base64'))"
  2. On every node, set auth.encryption.key to the new key and put the old
     one in auth.encryption.previous_keys, then restart the node. (To keep
     a node still on the old key from meeting rows it cannot read, first
     add the new key to previous_keys everywhere, then swap.)
  3. Run this command. It moves rows still under the old key in batches,
     locking each row briefly, so a node's refresh is never lost. If it
     stops part-way, run it again: rows already moved are skipped.
  4. When it reports success, remove the old key from previous_keys.

Rotating the key of one gateway (files in auth-dir):
  1. Stop the gateway. While a gateway (or any program) has auth-dir open,
     this command refuses (exit 1) and names that process; while it runs,
     a gateway does not start.
  2. Run this command. If it stops part-way, run it again: files already
     under the new key are skipped.
  3. Set auth.encryption.key to the new key (auth.encryption.enabled: true)
     and start the gateway. To start it before the command has finished,
     also keep the old key in previous_keys.

Exit codes: 0 done, 1 the rekey failed (nothing or only whole batches were
written; the message says which), 2 a usage, config or key error.
`;

const KEY_FILE_MAX_BYTES = 1024;

/** Runs `switchyard credentials <sub>`; resolves with the exit code. */
export async function credentialsCommand(args: readonly string[], io: RekeyIo): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    io.stdout(REKEY_USAGE);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'rekey') throw new RekeyUsageError(`unknown credentials command ${JSON.stringify(sub)} (there is: rekey)`);
  const { values } = parseArgs({
    args: [...rest],
    options: {
      config: { type: 'string', short: 'c' },
      'new-key-env': { type: 'string' },
      'new-key-file': { type: 'string' },
      'batch-size': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    io.stdout(REKEY_USAGE);
    return 0;
  }
  if (values.config === undefined) throw new RekeyUsageError('--config FILE is required: it names the store and its current keys');
  const batchSize = values['batch-size'] === undefined ? undefined : Number(values['batch-size']);
  if (batchSize !== undefined && !(Number.isInteger(batchSize) && batchSize > 0)) {
    throw new RekeyUsageError('--batch-size must be a positive integer');
  }
  const newKey = await readNewKey(values['new-key-env'], values['new-key-file'], io);
  const config = await loadConfigFile(values.config, { knownKinds: io.knownKinds });
  try {
    return config.cluster.enabled
      ? await rekeyPostgres(config, newKey, batchSize, io)
      : await rekeyFiles(config, values.config, newKey, io);
  } catch (error) {
    if (!(error instanceof CredentialsError)) throw error;
    io.stderr(`switchyard: rekey failed (${error.code}): ${error.message}\n`);
    return 1;
  }
}

async function readNewKey(envName: string | undefined, file: string | undefined, io: RekeyIo): Promise<EncryptionKey> {
  if ((envName === undefined) === (file === undefined)) {
    throw new RekeyUsageError('give the new key with exactly one of --new-key-env NAME or --new-key-file PATH');
  }
  let text: string;
  let source: string;
  if (envName !== undefined) {
    source = `environment variable ${envName}`;
    const value = io.env[envName];
    if (!value) throw new RekeyUsageError(`${source} is not set`);
    text = value;
  } else {
    source = `key file ${file}`;
    let info: Awaited<ReturnType<typeof stat>>;
    try {
      info = await stat(file!);
    } catch (error) {
      throw new RekeyUsageError(`cannot read ${source}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    if (!info.isFile() || info.size > KEY_FILE_MAX_BYTES) throw new RekeyUsageError(`${source} is not a small regular file`);
    if ((info.mode & 0o077) !== 0) io.stderr(`switchyard: warning: ${source} is readable by other users (chmod 600 it)\n`);
    text = await readFile(file!, 'utf8');
  }
  try {
    return parseEncryptionKey(text);
  } catch (error) {
    // The parser's message never repeats the input; name where it came from instead of the field it assumes.
    throw new RekeyUsageError(`the new key in ${source} is not usable: ${(error as Error).message.replace(/^auth\.encryption\.key /, '')}`);
  }
}

async function rekeyPostgres(config: GatewayConfig, newKey: EncryptionKey, batchSize: number | undefined, io: RekeyIo): Promise<number> {
  const { encryption } = config.auth;
  const store = await PostgresCredentialStore.open({
    connection: config.cluster.database_url,
    max: 2,
    nodeId: `rekey-${config.cluster.node_id || hostname()}`,
    encryption: { key: encryption.key!, previousKeys: encryption.previous_keys },
    events: { channel: config.cluster.auth_events_channel, reconcileIntervalMs: 0 },
  });
  try {
    io.stdout(`rekeying the credentials in PostgreSQL to key ${newKey.id}\n`);
    const report = await store.rekey(newKey, {
      ...(batchSize === undefined ? {} : { batchSize }),
      onProgress: ({ rekeyed, pending }) => io.stderr(`  ${rekeyed}/${pending} rows moved\n`),
    });
    io.stdout(
      [
        `rekeyed ${report.rekeyed} credential row(s) to key ${report.key_id} in ${report.batches} batch(es); ${report.already_current} were under it already.`,
        'Every credential is now under the new key. Next: once every node has it as auth.encryption.key,',
        'remove the old key from auth.encryption.previous_keys.',
        '',
      ].join('\n'),
    );
    return 0;
  } finally {
    await store.close();
  }
}

async function rekeyFiles(config: GatewayConfig, configPath: string, newKey: EncryptionKey, io: RekeyIo): Promise<number> {
  const { encryption } = config.auth;
  const store = await FileCredentialStore.open({
    directory: resolveAuthDir(config['auth-dir'], configPath),
    ...(encryption.enabled ? { encryption: { key: encryption.key!, previousKeys: encryption.previous_keys } } : {}),
    watchExternal: false,
  });
  try {
    io.stdout(`rekeying the credential files in ${store.directory} to key ${newKey.id}\n`);
    const report = await store.rekey(newKey);
    const lines = [
      `rekeyed ${report.rekeyed} credential file(s) to key ${report.key_id}; ${report.already_current} were under it already.`,
    ];
    if (report.skipped.length > 0) {
      lines.push(`left ${report.skipped.length} unusable file(s) as they were (they hold no readable secret):`);
      for (const { id, reason } of report.skipped) lines.push(`  ${id}.json: ${reason}`);
    }
    lines.push('Next: set auth.encryption.key to the new key (auth.encryption.enabled: true) and start the gateway.', '');
    io.stdout(lines.join('\n'));
    return 0;
  } finally {
    await store.close();
  }
}
