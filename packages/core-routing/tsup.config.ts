import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', contract: 'src/contract.ts', postgres: 'src/postgres.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: false,
  target: 'node20',
  platform: 'node',
  // Keep `node:` specifiers: `node:test` (used by the contract suite) has no unprefixed form.
  removeNodeProtocol: false,
  // `pg` is an optional peer: only the `./postgres` entry imports it.
  external: ['pg'],
});
