import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', postgres: 'src/postgres.ts', fs: 'src/fs.ts', ssrf: 'src/ssrf.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: false,
  target: 'node20',
  platform: 'node',
  // Keep `node:` specifiers: `node:test` has no unprefixed form.
  removeNodeProtocol: false,
  external: ['pg'],
});
