import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', contract: 'src/contract.ts', postgres: 'src/postgres.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: false,
  target: 'node20',
  platform: 'node',
  // Keep `node:` specifiers: `node:test` (imported by the contract suite) has no unprefixed form.
  removeNodeProtocol: false,
  // The contract suite runs under node:test; undici stays a dependency, not bundled.
  external: [/^node:/, 'undici', 'zod', 'eventemitter3', '@switchyard/core-routing', '@switchyard/core-routing/postgres', 'pg'],
});
