import { defineConfig } from 'tsup';

export default defineConfig([
  {
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: false,
    target: 'node20',
    platform: 'node',
    removeNodeProtocol: false,
  },
  {
    // The bin splits per command so `yard --help` loads only the program.
    entry: { bin: 'src/bin.ts' },
    format: ['esm'],
    splitting: true,
    sourcemap: true,
    target: 'node20',
    platform: 'node',
    removeNodeProtocol: false,
  },
]);
