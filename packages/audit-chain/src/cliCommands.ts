/**
 * @module cliCommands
 * The commands of the `audit-chain` CLI. Each reads its options, does one
 * job through the library, and returns an exit code.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import type { ParseArgsConfig } from 'node:util';
import { fromHex } from './core/bytes.js';
import { canonicalize } from './core/canonicalize.js';
import type { NoteVerifier } from './core/note.js';
import { SCHEMES, type Scheme, type TrustedState, type VerificationResult } from './core/result.js';
import {
  AuditLog,
  checkpointSidecarPath,
  createNoteSigner,
  createNoteVerifier,
  FileCheckpointStore,
  generateCheckpointKeys,
  JsonlAuditStore,
  MerkleTree,
  repairJsonlFile,
  verifyConsistency,
  verifyFile,
  verifyInclusion,
} from './index.js';
import { fileLines } from './node/lines.js';

/** Where a command reads and writes. */
export interface CommandContext {
  stdin: AsyncIterable<Buffer | string>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** A mistake in how the command was called; the CLI prints usage and exits 2. */
export class UsageError extends Error {}

type Values = Record<string, string | boolean | string[] | undefined>;

interface Command {
  summary: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(values: Values, positionals: string[], context: CommandContext): Promise<number>;
}

function requireString(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.length === 0) throw new UsageError(`--${name} is required`);
  return value;
}

function optionalString(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

function onePositional(positionals: string[], what: string): string {
  if (positionals.length !== 1) throw new UsageError(`expected exactly one ${what}, got ${positionals.length}`);
  return positionals[0]!;
}

function parseCount(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`--${name} must be a non-negative integer`);
  return Number(text);
}

async function readAll(stream: AsyncIterable<Buffer | string>): Promise<string> {
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of stream) text += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}

async function loadVerifiers(paths: string[], name: string | undefined): Promise<NoteVerifier[]> {
  const verifiers: NoteVerifier[] = [];
  for (const path of paths) {
    const text = await readFile(path, 'utf8');
    // A PEM key carries no name: take --name, else the file name without extension (keygen writes <name>.pub).
    const signer = name ?? basename(path, extname(path));
    verifiers.push(createNoteVerifier(text.includes('-----BEGIN') ? text : text.trim(), signer));
  }
  return verifiers;
}

async function loadTrustedState(path: string): Promise<TrustedState | undefined> {
  if (!existsSync(path)) return undefined;
  const state = JSON.parse(await readFile(path, 'utf8'));
  return state as TrustedState;
}

async function writeJsonAtomically(path: string, value: unknown): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(value, null, 2)}\n`);
  await rename(temporary, path);
}

function describe(result: VerificationResult): string {
  if (result.valid) {
    return `valid: ${result.entries_verified} entries verified (${result.scheme}), root ${result.root}\n`;
  }
  const where = result.first_invalid_id === null ? '' : ` at entry ${result.first_invalid_id}`;
  return `INVALID${where}: ${result.error_code}: ${result.error_message}\n(${result.entries_verified} entries verified before it)\n`;
}

const verify: Command = {
  summary: 'verify a log (chain, checkpoint, trusted state)',
  usage: `Usage: audit-chain verify <file> [options]

  --scheme S          jcs-sha256-v1 (default) or agileplus-v1
  --origin O          the log's name; entry 1 must link to its genesis hash
  --checkpoint F      a signed checkpoint note the log must match
                      (default: the latest in <file>.checkpoints when --public-key is given)
  --public-key F      a key trusted to sign checkpoints: <name>.vkey, or PEM (repeatable)
  --name N            signer name for a PEM key (default: the key file's base name)
  --trusted-state F   JSON {origin,size,root} from an earlier run; refuses rollback and forks,
                      and is created (needs --origin or a checkpoint) or advanced after a valid run
  --fast              hash-only fast path (skips canonical-form and field checks)
  --json              print the result as one JSON object`,
  options: {
    scheme: { type: 'string' },
    origin: { type: 'string' },
    checkpoint: { type: 'string' },
    'public-key': { type: 'string', multiple: true },
    name: { type: 'string' },
    'trusted-state': { type: 'string' },
    fast: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  async run(values, positionals, context) {
    const file = onePositional(positionals, 'log file');
    const scheme = (optionalString(values, 'scheme') ?? 'jcs-sha256-v1') as Scheme;
    if (!SCHEMES.includes(scheme)) throw new UsageError(`--scheme must be one of ${SCHEMES.join(', ')}`);
    if (!existsSync(file)) throw new Error(`no such file: ${file}`);
    const keyPaths = (values['public-key'] as string[] | undefined) ?? [];
    const verifiers = await loadVerifiers(keyPaths, optionalString(values, 'name'));
    let checkpoint: string | undefined;
    const checkpointPath = optionalString(values, 'checkpoint');
    if (checkpointPath !== undefined) {
      if (verifiers.length === 0) throw new UsageError('--checkpoint needs --public-key to check its signature');
      checkpoint = await readFile(checkpointPath, 'utf8');
    } else if (verifiers.length > 0) {
      checkpoint = (await new FileCheckpointStore(checkpointSidecarPath(file)).latest())?.note;
    }
    const trustedPath = optionalString(values, 'trusted-state');
    const trustedState = trustedPath === undefined ? undefined : await loadTrustedState(trustedPath);
    const origin = optionalString(values, 'origin');
    // A new trusted state records the log's origin: without one it could not be written, and the next run would trust nothing.
    if (trustedPath !== undefined && trustedState === undefined && origin === undefined && checkpoint === undefined) {
      throw new UsageError(`--trusted-state ${trustedPath} does not exist yet: give --origin (or a checkpoint) so it can be created`);
    }
    const result = await verifyFile(file, {
      scheme,
      origin,
      mode: values.fast ? 'hash-only' : 'strict',
      checkpoint,
      verifiers,
      trustedState,
    });
    if (result.valid && trustedPath !== undefined && result.origin !== null) {
      await writeJsonAtomically(trustedPath, { origin: result.origin, size: result.tree_size, root: result.root });
    }
    if (values.json) {
      context.stdout(`${JSON.stringify(result)}\n`);
    } else {
      context.stdout(describe(result));
      for (const warning of result.warnings) context.stderr(`warning: ${warning}\n`);
    }
    return result.valid ? 0 : 1;
  },
};

const append: Command = {
  summary: 'append JSON objects from stdin, one per line',
  usage: `Usage: audit-chain append <file> --origin O < entries.jsonl

Reads JSON objects, one per line, from stdin and appends them all or none,
filling in id, timestamp (when absent), prev_hash and hash. Prints the stored lines.
Safe to run from several processes at once (a lock file serializes writers).`,
  options: { origin: { type: 'string' } },
  async run(values, positionals, context) {
    const file = onePositional(positionals, 'log file');
    const origin = requireString(values, 'origin');
    const fields: Record<string, unknown>[] = [];
    const lines = (await readAll(context.stdin)).split('\n');
    lines.forEach((line, index) => {
      if (line.trim().length === 0) return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        throw new UsageError(`stdin line ${index + 1} is not JSON: ${(error as Error).message}`);
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw new UsageError(`stdin line ${index + 1} is not a JSON object`);
      fields.push(value as Record<string, unknown>);
    });
    const store = await JsonlAuditStore.open(file, { multiProcess: true });
    try {
      const log = new AuditLog(store, { origin });
      await log.assertOrigin();
      const entries = await log.appendMany(fields as never[]);
      // The stored line is the entry's canonical form (SPEC.md section 3), not JSON.stringify's key order.
      for (const entry of entries) context.stdout(`${canonicalize(entry)}\n`);
    } finally {
      await store.close();
    }
    return 0;
  },
};

/**
 * The file name keygen gives a key: the key name with anything but `[A-Za-z0-9._-]` replaced by
 * `_`, so a C2SP name (`example.com/log`) neither needs a subdirectory nor leaves `--out`.
 */
export function keyFileBase(name: string): string {
  const base = name.replace(/[^A-Za-z0-9._-]/g, '_');
  return /^\.+$/.test(base) ? base.replace(/\./g, '_') : base;
}

const keygen: Command = {
  summary: 'create an Ed25519 key pair for signing checkpoints',
  usage: `Usage: audit-chain keygen --name N --out DIR [--force]

Writes DIR/F.key (private, PKCS#8 PEM, mode 0600), DIR/F.pub (SPKI PEM)
and DIR/F.vkey (the C2SP verifier key <name>+<keyid>+<key>), where F is the
name with every character other than letters, digits, '.', '_' and '-'
replaced by '_' (C2SP names such as example.com/log hold a slash; the file
stays in DIR). The .vkey carries the full name; give --name N when
verifying with a .pub whose file name differs from N.`,
  options: { name: { type: 'string' }, out: { type: 'string' }, force: { type: 'boolean' } },
  async run(values, _positionals, context) {
    const name = requireString(values, 'name');
    const dir = requireString(values, 'out');
    const keys = generateCheckpointKeys(name);
    await mkdir(dir, { recursive: true });
    const flag = values.force ? 'w' : 'wx';
    const base = keyFileBase(name);
    const privatePath = join(dir, `${base}.key`);
    await writeFile(privatePath, keys.privateKeyPem, { mode: 0o600, flag });
    await writeFile(join(dir, `${base}.pub`), keys.publicKeyPem, { flag });
    await writeFile(join(dir, `${base}.vkey`), `${keys.verifierKey}\n`, { flag });
    context.stdout(
      `wrote ${privatePath} (keep secret), ${join(dir, `${base}.pub`)}, ${join(dir, `${base}.vkey`)}\nverifier key: ${keys.verifierKey}\n`,
    );
    return 0;
  },
};

const checkpoint: Command = {
  summary: 'sign a checkpoint of the current head',
  usage: `Usage: audit-chain checkpoint <file> --origin O --key F --name N

Signs a C2SP checkpoint (origin, size, root) of the log with the Ed25519 key F,
prints the signed note and appends it to <file>.checkpoints.`,
  options: { origin: { type: 'string' }, key: { type: 'string' }, name: { type: 'string' } },
  async run(values, positionals, context) {
    const file = onePositional(positionals, 'log file');
    const origin = requireString(values, 'origin');
    const signer = createNoteSigner(requireString(values, 'name'), await readFile(requireString(values, 'key'), 'utf8'));
    if (!existsSync(file)) throw new Error(`no such file: ${file}`);
    const store = await JsonlAuditStore.open(file, { multiProcess: true });
    try {
      const log = new AuditLog(store, { origin, checkpoints: new FileCheckpointStore(checkpointSidecarPath(file)) });
      await log.assertOrigin();
      context.stdout(await log.checkpoint(signer));
    } finally {
      await store.close();
    }
    return 0;
  },
};

const exportCheckpoint: Command = {
  summary: 'print (or write) the latest signed checkpoint',
  usage: `Usage: audit-chain export-checkpoint <file> [--out F]

Exports the latest note from <file>.checkpoints, verbatim.`,
  options: { out: { type: 'string' } },
  async run(values, positionals, context) {
    const file = onePositional(positionals, 'log file');
    const latest = await new FileCheckpointStore(checkpointSidecarPath(file)).latest();
    if (!latest) throw new Error(`no checkpoint saved for ${file}; run \`audit-chain checkpoint\` first`);
    const out = optionalString(values, 'out');
    if (out === undefined) context.stdout(latest.note);
    else await writeFile(out, latest.note);
    return 0;
  },
};

async function treeOf(file: string): Promise<MerkleTree> {
  const tree = new MerkleTree();
  for await (const event of fileLines(file)) {
    if (event.kind !== 'line') break;
    const { hash } = JSON.parse(event.line) as { hash: string };
    tree.append(fromHex(hash));
  }
  return tree;
}

const prove: Command = {
  summary: 'print an inclusion or consistency proof as JSON',
  usage: `Usage: audit-chain prove <file> --index I [--size N]
       audit-chain prove <file> --first M [--size N]

--index I   inclusion proof of the leaf at 0-based index I (entry id I+1)
--first M   consistency proof from the first M entries to the first N
--size N    tree size the proof is for (default: the whole log)`,
  options: { index: { type: 'string' }, first: { type: 'string' }, size: { type: 'string' } },
  async run(values, positionals, context) {
    const file = onePositional(positionals, 'log file');
    const index = parseCount(optionalString(values, 'index'), 'index');
    const first = parseCount(optionalString(values, 'first'), 'first');
    if ((index === undefined) === (first === undefined)) throw new UsageError('give exactly one of --index and --first');
    const tree = await treeOf(file);
    const size = parseCount(optionalString(values, 'size'), 'size') ?? tree.size;
    const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
    if (index !== undefined) {
      const proof = {
        leaf_index: index,
        tree_size: size,
        leaf_hash: hex(tree.leaf(index)),
        audit_path: tree.inclusionProof(index, size).map(hex),
        root: hex(tree.root(size)),
      };
      context.stdout(`${JSON.stringify(proof, null, 2)}\n`);
    } else {
      const proof = {
        first_size: first!,
        second_size: size,
        first_root: hex(tree.root(first!)),
        second_root: hex(tree.root(size)),
        proof: tree.consistencyProof(first!, size).map(hex),
      };
      context.stdout(`${JSON.stringify(proof, null, 2)}\n`);
    }
    return 0;
  },
};

const verifyProof: Command = {
  summary: 'check an inclusion or consistency proof (JSON from `prove`)',
  usage: `Usage: audit-chain verify-proof [--proof F] [--root HEX]

Reads the proof from F or stdin. For an inclusion proof, --root is the root you
trust (default: the proof's own root, which only checks internal consistency).`,
  options: { proof: { type: 'string' }, root: { type: 'string' } },
  async run(values, _positionals, context) {
    const path = optionalString(values, 'proof');
    const text = path === undefined ? await readAll(context.stdin) : await readFile(path, 'utf8');
    let proof: Record<string, unknown>;
    try {
      proof = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`the proof is not JSON: ${(error as Error).message}`);
    }
    const root = optionalString(values, 'root');
    let kind: string;
    let valid: boolean;
    if (Array.isArray(proof.audit_path)) {
      kind = 'inclusion';
      valid = verifyInclusion(proof as never, root);
    } else if (Array.isArray(proof.proof)) {
      kind = 'consistency';
      valid = verifyConsistency(proof as never, undefined, root);
    } else {
      throw new UsageError('not a proof: expected audit_path (inclusion) or proof (consistency)');
    }
    context.stdout(`${JSON.stringify({ valid, kind })}\n`);
    return valid ? 0 : 1;
  },
};

const repair: Command = {
  summary: 'fix a torn last line without dropping a complete entry',
  usage: `Usage: audit-chain repair <file> [--origin O]

If the file ends with an incomplete line (a crash mid-write), removes it; if that
line is in fact a complete, valid next entry missing only its newline, adds the newline.`,
  options: { origin: { type: 'string' } },
  async run(values, positionals, context) {
    const file = onePositional(positionals, 'log file');
    if (!existsSync(file)) throw new Error(`no such file: ${file}`);
    const origin = optionalString(values, 'origin');
    const result = await repairJsonlFile(file, origin === undefined ? {} : { origin });
    context.stdout(`${result.action}: ${result.message}\n`);
    return 0;
  },
};

/** Every command, by name. */
export const COMMANDS: Record<string, Command> = {
  verify,
  append,
  keygen,
  checkpoint,
  'export-checkpoint': exportCheckpoint,
  prove,
  'verify-proof': verifyProof,
  repair,
};
