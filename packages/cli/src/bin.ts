#!/usr/bin/env node
/**
 * @module bin
 * Process entry of the `yard` command.
 */
import { processIO } from './io.js';
import { main } from './main.js';

const code = await main(process.argv.slice(2), processIO());
process.exitCode = code;
// `main` returns when the command is done (servers and MCP when they are
// stopped), so end here once output is flushed, even if a library left a
// keep-alive handle open.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
