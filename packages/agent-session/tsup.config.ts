import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', engine: 'src/engine/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: false,
  target: 'node20',
  platform: 'node',
  // Keep `node:` specifiers: `node:test` has no unprefixed form.
  removeNodeProtocol: false,
  // Native and optional: loaded at run time from the user's install, never bundled.
  external: ['node-pty', '@xterm/headless'],
});
