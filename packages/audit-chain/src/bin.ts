#!/usr/bin/env node
/**
 * @module bin
 * Process entry of the `audit-chain` command.
 */
import { main } from './cli.js';

process.exitCode = await main(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
