/**
 * Benchmark of @switchyard/audit-chain: verification throughput (strict and
 * hash-only) as a ratio of raw `crypto.hash` over the same bytes, inclusion
 * proof checks at 2^20 leaves, and peak RSS while verifying a 1M-entry file.
 *
 *   pnpm bench audit-chain            full run
 *   pnpm bench audit-chain --smoke    quick pass (CI)
 */
import { spawnSync } from 'node:child_process';
import { hash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { genesisHash, MerkleTree, StreamingVerifier, sealEntry, verifyFile, verifyInclusion } from '@switchyard/audit-chain';
import { type Row, report, SMOKE, throughput, throughputAsync } from './lib.js';

const ORIGIN = 'bench:audit-chain';
const LINES = SMOKE ? 20_000 : 200_000;
const FILE_ENTRIES = SMOKE ? 50_000 : 1_000_000;
const TREE_LEAVES = SMOKE ? 2 ** 14 : 2 ** 20;

/** Realistic entries: a workflow transition with a couple of evidence refs (~300 bytes per line). */
function* sealedLines(count: number): Generator<string> {
  let prevHash = genesisHash(ORIGIN);
  const start = Date.parse('2026-01-01T00:00:00Z');
  for (let id = 1; id <= count; id++) {
    const { entry, line } = sealEntry({
      id,
      prevHash,
      timestamp: new Date(start + id * 1000).toISOString(),
      fields: {
        actor: `agent-${id % 17}`,
        feature_slug: '042-checkout-flow',
        wp_sequence: id % 9,
        transition: 'DOING -> REVIEW',
        evidence_refs: [`ci-run-${id}`, `review-${id % 101}`],
      },
    });
    prevHash = entry.hash;
    yield line;
  }
}

const lines = [...sealedLines(LINES)];
const bytesPerLine = lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0) / lines.length;

const baseline = throughput(() => {
  for (const line of lines) hash('sha256', line, 'hex');
  return lines.length;
});
const strict = throughput(() => {
  const verifier = new StreamingVerifier({ origin: ORIGIN });
  for (const line of lines) verifier.pushLine(line);
  if (verifier.finish().entries_verified !== lines.length) throw new Error('strict verification failed');
  return lines.length;
});
const fast = throughput(() => {
  const verifier = new StreamingVerifier({ origin: ORIGIN, mode: 'hash-only' });
  for (const line of lines) verifier.pushLine(line);
  if (verifier.finish().entries_verified !== lines.length) throw new Error('hash-only verification failed');
  return lines.length;
});

// Inclusion proofs at 2^20 leaves.
const tree = new MerkleTree();
const leaves = randomBytes(32 * TREE_LEAVES);
for (let i = 0; i < TREE_LEAVES; i++) tree.append(leaves.subarray(i * 32, i * 32 + 32));
const root = Buffer.from(tree.root()).toString('hex');
const proofs = Array.from({ length: 2000 }, (_, k) => {
  const index = (k * 7919) % TREE_LEAVES;
  return {
    leaf_index: index,
    tree_size: TREE_LEAVES,
    leaf_hash: Buffer.from(tree.leaf(index)).toString('hex'),
    audit_path: tree.inclusionProof(index).map((p) => Buffer.from(p).toString('hex')),
  };
});
const pathLength = proofs[0]!.audit_path.length;
const nodeInputs = Array.from({ length: pathLength }, () => randomBytes(65));
const proofBaseline = throughput(() => {
  for (let k = 0; k < proofs.length; k++) for (const input of nodeInputs) hash('sha256', input, 'buffer');
  return proofs.length;
});
const proofChecks = throughput(() => {
  for (const proof of proofs) if (!verifyInclusion(proof, root)) throw new Error('proof failed');
  return proofs.length;
});

// A JSONL file for streaming verification and the RSS measurement.
const dir = await mkdtemp(join(tmpdir(), 'bench-audit-'));
const file = join(dir, 'audit.jsonl');
await new Promise<void>((resolve, reject) => {
  const out = createWriteStream(file);
  out.on('error', reject);
  const source = sealedLines(FILE_ENTRIES);
  const pump = () => {
    for (;;) {
      const next = source.next();
      if (next.done) return out.end(resolve);
      if (!out.write(`${next.value}\n`)) return out.once('drain', pump);
    }
  };
  pump();
});
const fileRate = await throughputAsync(async () => {
  const result = await verifyFile(file, { origin: ORIGIN });
  if (!result.valid) throw new Error(result.error_message ?? 'file invalid');
  return result.entries_verified;
}, 1);
// Peak RSS in a fresh process that does nothing but verify the file.
const child = spawnSync(process.execPath, [fileURLToPath(new URL('./audit-chain-rss.mjs', import.meta.url)), file, ORIGIN], {
  encoding: 'utf8',
  env: { ...process.env, NODE_OPTIONS: '' },
});
if (child.status !== 0) throw new Error(`RSS probe failed: ${child.stderr}`);
const { maxRssMb, entries } = JSON.parse(child.stdout.trim().split('\n').at(-1)!);
await rm(dir, { recursive: true, force: true });

const rows: Row[] = [
  { name: `baseline: crypto.hash over each line (${Math.round(bytesPerLine)} B/line)`, value: baseline, unit: 'lines/s' },
  {
    name: 'strict verification (parse, canonical check, hash, link, Merkle)',
    value: strict,
    unit: 'entries/s',
    baseline,
    target: '≥ 130,000/s',
    pass: strict >= 130_000,
  },
  { name: 'hash-only fast path', value: fast, unit: 'entries/s', baseline, target: '≥ 300,000/s', pass: fast >= 300_000 },
  {
    name: `verifyFile streaming from disk (${FILE_ENTRIES.toLocaleString('en-US')} entries)`,
    value: fileRate,
    unit: 'entries/s',
    baseline,
  },
  { name: `baseline: ${pathLength} node hashes (one proof's worth)`, value: proofBaseline, unit: 'proofs/s' },
  {
    name: `inclusion-proof checks at ${TREE_LEAVES.toLocaleString('en-US')} leaves`,
    value: proofChecks,
    unit: 'checks/s',
    baseline: proofBaseline,
    target: '≥ 30,000/s',
    pass: proofChecks >= 30_000,
  },
  {
    name: `peak RSS of a process verifying ${entries.toLocaleString('en-US')} entries (built package)`,
    value: maxRssMb,
    unit: 'MB',
    target: '< 100 MB',
    pass: maxRssMb < 100,
  },
];
report('audit-chain', rows);
