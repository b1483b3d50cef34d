#!/usr/bin/env node
/**
 * @module bin
 * Process entry of the `yard` command.
 */
import { processIO } from './io.js';
import { main } from './main.js';

const code = await main(process.argv.slice(2), processIO()).catch((error: unknown) => {
  // Only a broken installation gets here (a module that does not load); say so and fail.
  process.stderr.write(`yard: ${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
});
process.exitCode = code;
// `main` returns when the command is done (servers and MCP when they are
// stopped), so end here once output is flushed, even if a library left a
// keep-alive handle open.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
