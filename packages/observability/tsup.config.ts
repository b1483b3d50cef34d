import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    tracing: 'src/tracing/index.ts',
    config: 'src/config.ts',
    events: 'src/eventTypes.ts',
    logging: 'src/logging.ts',
    notify: 'src/notify.ts',
    usage: 'src/usage.ts',
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
});
