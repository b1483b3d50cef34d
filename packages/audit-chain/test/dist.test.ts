import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build, type Options } from 'tsup';
import configs from '../tsup.config.js';

const run = promisify(execFile);
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const outDir = await mkdtemp(join(tmpdir(), 'audit-dist-'));
after(() => rm(outDir, { recursive: true, force: true }));
// As in the published package: .js is ESM, .cjs is CommonJS.
await writeFile(join(outDir, 'package.json'), '{"type":"module"}\n');

// The published build, made with the package's own tsup config (declarations and maps left out: they do not run).
const options = (Array.isArray(configs) ? configs : [configs]) as Options[];
for (const config of options) {
  const entry = Object.fromEntries(
    Object.entries(config.entry as Record<string, string>).map(([name, path]) => [name, join(packageDir, path)]),
  );
  await build({
    ...config,
    entry,
    outDir,
    dts: false,
    sourcemap: false,
    silent: true,
    config: false,
    tsconfig: join(packageDir, 'tsconfig.json'),
  });
}

for (const [entry, exported] of [
  ['index', 'verifyFile'],
  ['web', 'verifyJsonl'],
  ['contract', 'runAuditStoreContract'],
] as const) {
  test(`the built ${entry} entry loads with import and with require`, async () => {
    const esm = pathToFileURL(join(outDir, `${entry}.js`)).href;
    const cjs = join(outDir, `${entry}.cjs`);
    const script = `
      const viaImport = await import(${JSON.stringify(esm)});
      const viaRequire = (await import('node:module')).createRequire(import.meta.url)(${JSON.stringify(cjs)});
      console.log(typeof viaImport.${exported}, typeof viaRequire.${exported});`;
    // A consumer's plain node: without the test runner's tsx and source condition (NODE_OPTIONS).
    const env = { ...process.env, NODE_OPTIONS: '' };
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: outDir, env });
    assert.equal(stdout.trim(), 'function function');
  });
}
