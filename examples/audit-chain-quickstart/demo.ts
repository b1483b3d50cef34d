/**
 * The `pnpm start` demo: writes an audit log, signs a checkpoint, proves an
 * entry, then tampers with the file three ways and shows each one caught.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AuditLog,
  checkpointSidecarPath,
  createNoteSigner,
  createNoteVerifier,
  FileCheckpointStore,
  generateCheckpointKeys,
  JsonlAuditStore,
  verifyFile,
  verifyInclusion,
} from '@switchyard/audit-chain';

const dir = process.argv[2] ?? (await mkdtemp(join(tmpdir(), 'switchyard-demo-')));
const file = join(dir, 'audit.jsonl');
const origin = 'demo.switchyard.dev/deploys';
const say = (text: string) => console.log(text);

say(`Writing an audit log to ${file}`);
const keys = generateCheckpointKeys('demo.switchyard.dev');
const store = await JsonlAuditStore.open(file);
const log = new AuditLog(store, { origin, checkpoints: new FileCheckpointStore(checkpointSidecarPath(file)) });
const actions = ['create', 'deploy', 'scale', 'deploy', 'rollback', 'deploy'];
for (const [i, action] of actions.entries()) await log.append({ actor: i % 2 ? 'bob' : 'alice', action, service: 'api' });
const note = await log.checkpoint(createNoteSigner('demo.switchyard.dev', keys.privateKeyPem));
const proof = await log.proveInclusion(3);
await store.close();

say(`\nSigned checkpoint (C2SP signed note):\n${note}`);
say(`Inclusion proof for entry 4: ${proof.audit_path.length} hashes, verifies: ${verifyInclusion(proof)}`);

const verifiers = [createNoteVerifier(keys.verifierKey)];
const check = async (label: string, path: string) => {
  const result = await verifyFile(path, { origin, checkpoint: note, verifiers });
  const verdict = result.valid
    ? `valid, ${result.entries_verified} entries`
    : `${result.error_code} at entry ${result.first_invalid_id ?? '-'}`;
  say(`  ${label.padEnd(34)} → ${verdict}`);
  return result;
};

say('\nVerifying:');
const original = await readFile(file, 'utf8');
const lines = original.split('\n').slice(0, -1);
const variant = async (name: string, text: string) => {
  const path = join(dir, `${name}.jsonl`);
  await writeFile(path, text);
  return path;
};
const results = [
  await check('the log as written', file),
  await check('one field edited (bob → eve)', await variant('edited', original.replace('"bob"', '"eve"'))),
  await check('entry 3 deleted', await variant('deleted', `${lines.filter((_, i) => i !== 2).join('\n')}\n`)),
  await check('last two entries cut off', await variant('truncated', `${lines.slice(0, 4).join('\n')}\n`)),
];
say('\nThe same checks from the command line:');
say(`  pnpm exec audit-chain verify ${file} --origin ${origin}`);
if (!results[0]!.valid || results.slice(1).some((r) => r.valid)) process.exit(1);
