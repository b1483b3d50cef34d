import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', tracing: 'src/tracing/index.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: false,
  target: 'node20',
  platform: 'node',
});
