import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', sqlite: 'src/sqlite.ts', postgres: 'src/postgres.ts', contract: 'src/contract.ts' },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: false,
  target: 'node20',
  platform: 'node',
  external: ['better-sqlite3', 'pg', 'node:test'],
});
