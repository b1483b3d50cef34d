import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    domain: 'src/domain.ts',
    git: 'src/git.ts',
    lifecycle: 'src/lifecycle.ts',
    sync: 'src/sync.ts',
    sqlite: 'src/sqlite.ts',
    postgres: 'src/postgres.ts',
    contract: 'src/contract.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: false,
  target: 'node20',
  platform: 'node',
  // Keep `node:` specifiers: `node:test` (imported by the contract suite) has no unprefixed form.
  removeNodeProtocol: false,
  external: ['better-sqlite3', 'pg', 'node:test'],
});
