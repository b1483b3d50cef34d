#!/usr/bin/env node
/**
 * @module bin
 * Process entry of the `switchyard` command.
 */
import { main } from './cli.js';

process.exitCode = await main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
