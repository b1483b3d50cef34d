import { defineConfig } from 'tsup';

export default defineConfig([
  {
    entry: { index: 'src/index.ts', web: 'src/web.ts', contract: 'src/contract.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: false,
    target: 'node20',
    platform: 'neutral',
    external: [/^node:/],
    // Keep `node:` specifiers: `node:test` (the contract suite) has no unprefixed form, and tsup strips the prefix by default.
    removeNodeProtocol: false,
  },
  {
    entry: { bin: 'src/bin.ts' },
    format: ['esm'],
    sourcemap: true,
    target: 'node20',
    platform: 'node',
    removeNodeProtocol: false,
  },
]);
