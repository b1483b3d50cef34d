import { defineConfig } from 'tsup';

export default defineConfig([
  {
    entry: { index: 'src/index.ts', agent: 'src/agent/engine/index.ts' },
    // Native and optional: loaded at run time from the user's install, never bundled.
    external: ['node-pty', '@xterm/headless'],
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: false,
    target: 'node20',
    platform: 'node',
    removeNodeProtocol: false,
  },
  {
    entry: { bin: 'src/bin.ts' },
    external: ['node-pty', '@xterm/headless'],
    format: ['esm'],
    sourcemap: true,
    clean: false,
    target: 'node20',
    platform: 'node',
    removeNodeProtocol: false,
  },
]);
