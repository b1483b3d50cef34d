/**
 * Regenerates test-vectors.json. The vectors are inputs and outputs of the
 * format in SPEC.md, for people porting the verifier to another language.
 * The primitives underneath (JCS, SHA-256, RFC 6962) are pinned
 * independently by the RFC known answers in the test suite, so these
 * vectors cannot drift without a test failing.
 *
 * Run: node --conditions=@switchyard/source --import tsx scripts/generate-test-vectors.ts
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { fromHex, toHex } from '../src/core/bytes.js';
import { formatVerifierKeyWith } from '../src/core/note.js';
import {
  AGILEPLUS_GENESIS,
  AuditLog,
  agilePlusHash,
  canonicalize,
  createNoteSigner,
  formatCheckpoint,
  genesisHash,
  MemoryAuditStore,
  MerkleTree,
  signNote,
} from '../src/index.js';
import { rawPublicKey } from '../src/node/keys.js';
import { nodeHashSuite } from '../src/node/nodeHashSuite.js';

const ORIGIN = 'switchyard.dev/test-vectors/v1';
const hex = (b: Uint8Array) => toHex(b);

const canonicalization = [
  '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
  '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}',
  '{"b":[1,{"d":-0,"c":1e21}],"a":"x\\ty","é":null}',
].map((input) => ({ input, canonical: canonicalize(JSON.parse(input)) }));

const origins = ['workflow:my-repo/001-login', ORIGIN, 'ünïcode origin'];
const genesis = origins.map((origin) => ({ origin, prev_hash: genesisHash(origin) }));

// A chain with fixed timestamps.
const store = new MemoryAuditStore();
let tick = Date.parse('2026-01-01T00:00:00Z');
const log = new AuditLog(store, { origin: ORIGIN, now: () => new Date((tick += 60_000)) });
const fieldsList = [
  { actor: 'alice', transition: 'CREATED -> SPECIFIED', evidence_refs: [] },
  { actor: 'bob', transition: 'SPECIFIED -> RESEARCHED', evidence_refs: ['ev-1'] },
  { actor: 'ci', transition: 'PLANNED -> DOING', wp_sequence: 1, details: { hash: 'nested keys named hash are ordinary data', n: 1.5 } },
  { actor: 'ünïcødé 🚀', transition: 'DOING -> REVIEW', timestamp: '2026-02-03T04:05:06.789+02:00' },
  { actor: 'alice', transition: 'REVIEW -> DONE' },
  { actor: 'alice', transition: 'IMPLEMENTING -> VALIDATED' },
  { actor: 'release', transition: 'VALIDATED -> SHIPPED' },
];
const entries: { fields: object; line: string; hash_input: string; hash: string }[] = [];
for (const fields of fieldsList) {
  const entry = await log.append(fields);
  const { hash: _hash, ...withoutHash } = entry;
  entries.push({ fields, line: canonicalize(entry), hash_input: canonicalize(withoutHash), hash: entry.hash });
}
const tree = new MerkleTree();
for (const e of entries) tree.append(fromHex(e.hash));
const roots = Array.from({ length: entries.length + 1 }, (_, size) => hex(tree.root(size)));
const inclusion = [
  [0, 1],
  [0, 7],
  [3, 7],
  [6, 7],
  [4, 5],
].map(([index, size]) => ({
  leaf_index: index!,
  tree_size: size!,
  leaf_hash: entries[index!]!.hash,
  audit_path: tree.inclusionProof(index!, size).map(hex),
  root: roots[size!],
}));
const consistency = [
  [1, 7],
  [3, 7],
  [4, 7],
  [6, 7],
  [2, 5],
].map(([first, second]) => ({
  first_size: first!,
  second_size: second!,
  first_root: roots[first!],
  second_root: roots[second!],
  proof: tree.consistencyProof(first!, second).map(hex),
}));

// A checkpoint signed with a fixed key; Ed25519 signatures are deterministic.
const seed = fromHex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60');
const privateKey = createPrivateKey({
  key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]),
  format: 'der',
  type: 'pkcs8',
});
const publicKey = rawPublicKey(createPublicKey(privateKey));
const signer = createNoteSigner('vectors.switchyard.dev', privateKey);
const body = formatCheckpoint({ origin: ORIGIN, size: entries.length, root: roots[entries.length]! });
const checkpoint = {
  key_name: 'vectors.switchyard.dev',
  private_key_seed: hex(seed),
  public_key: hex(publicKey),
  key_id: hex(signer.keyId),
  verifier_key: formatVerifierKeyWith(nodeHashSuite, 'vectors.switchyard.dev', publicKey),
  body,
  note: await signNote(body, [signer]),
};

// AgilePlus scheme.
let prev = AGILEPLUS_GENESIS;
const agileplus = [
  {
    id: 1,
    feature_id: 1,
    wp_id: null,
    timestamp: '2026-03-01T10:00:00Z',
    actor: 'agent',
    transition: 'Created -> Specified',
    evidence_refs: [],
  },
  {
    id: 2,
    feature_id: 1,
    wp_id: 4,
    timestamp: '2026-03-01T10:05:00.123456Z',
    actor: 'agent',
    transition: 'Planned -> Doing',
    evidence_refs: [],
  },
  {
    id: 5,
    feature_id: 9007199254740991,
    wp_id: -1,
    timestamp: '2026-03-02T00:00:00+00:00',
    actor: 'ünï',
    transition: 'Doing -> Review',
    evidence_refs: [],
  },
].map((row) => {
  const hash = agilePlusHash({ ...row, prev_hash: prev });
  const out = { ...row, prev_hash: prev, hash };
  prev = hash;
  return out;
});

// Tamper cases: a verifier must report exactly these codes and entries.
const lines = entries.map((e) => e.line);
const tamper = [
  { name: 'valid', lines, valid: true, error_code: null, first_invalid_id: null },
  {
    name: 'field edited',
    lines: lines.map((l, i) => (i === 1 ? l.replace('"bob"', '"bib"') : l)),
    valid: false,
    error_code: 'HASH_MISMATCH',
    first_invalid_id: 2,
  },
  { name: 'line deleted', lines: lines.filter((_, i) => i !== 2), valid: false, error_code: 'ID_SEQUENCE', first_invalid_id: 3 },
  {
    name: 'lines swapped',
    lines: [lines[0], lines[2], lines[1], ...lines.slice(3)],
    valid: false,
    error_code: 'ID_SEQUENCE',
    first_invalid_id: 2,
  },
  {
    name: 're-spaced',
    lines: lines.map((l, i) => (i === 4 ? JSON.stringify(JSON.parse(l), null, 1).replace(/\n/g, '') : l)),
    valid: false,
    error_code: 'NOT_CANONICAL',
    first_invalid_id: 5,
  },
  {
    name: 'duplicate key',
    lines: lines.map((l, i) => (i === 5 ? l.replace('{"actor":', '{"actor":"x","actor":') : l)),
    valid: false,
    error_code: 'DUPLICATE_KEY',
    first_invalid_id: 6,
  },
];

const vectors = {
  description: 'Test vectors for @switchyard/audit-chain scheme jcs-sha256-v1 and agileplus-v1. See SPEC.md.',
  origin: ORIGIN,
  canonicalization,
  genesis,
  entries,
  merkle: { roots_by_size: roots, inclusion, consistency },
  checkpoint,
  agileplus,
  tamper,
};
writeFileSync(new URL('../test-vectors.json', import.meta.url), `${JSON.stringify(vectors, null, 2)}\n`);
console.log('wrote test-vectors.json');
