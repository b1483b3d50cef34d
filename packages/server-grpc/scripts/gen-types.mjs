#!/usr/bin/env node
// Regenerates src/generated/ from the checked-in .proto with proto-loader-gen-types,
// then adds the `.js` extensions NodeNext resolution needs and formats the result.
//   pnpm --filter @switchyard/server-grpc gen-types
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'src', 'generated');
rmSync(out, { recursive: true, force: true });
execFileSync(
  join(root, 'node_modules', '.bin', 'proto-loader-gen-types'),
  ['--keepCase', '--longs=Number', '--enums=String', '--defaults', '--oneofs', '--grpcLib=@grpc/grpc-js', `--outDir=${out}`, 'proto/switchyard/workflow/v1/workflow.proto'],
  { cwd: root, stdio: 'inherit' },
);
const walk = (dir) =>
  readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : [join(dir, name)]));
for (const file of walk(out)) {
  const text = readFileSync(file, 'utf8').replace(/from '(\.{1,2}\/[^']+)'/g, "from '$1.js'");
  writeFileSync(file, text);
}
execFileSync(join(root, '..', '..', 'node_modules', '.bin', 'biome'), ['check', '--write', '--unsafe', out], { stdio: 'inherit' });
