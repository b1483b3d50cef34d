// Finding a pseudo-terminal module: the first that loads wins; none loading is an error that says what to install.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AgentSessionError } from '../errors.js';
import { loadPtyModule, PTY_MODULES } from './ptyModule.js';

test('node-pty is tried first, then the prebuilt @lydell/node-pty', () => {
  assert.deepEqual(PTY_MODULES, ['node-pty', '@lydell/node-pty']);
});

test('the first candidate that loads is used, after ones that do not', async () => {
  const pty = await loadPtyModule(['@switchyard/no-such-pty-module', '@lydell/node-pty']);
  assert.equal(typeof pty.spawn, 'function');
});

test('when none loads, the error names each failure and exactly what to install', async () => {
  await assert.rejects(loadPtyModule(['@switchyard/no-such-pty-module', 'node:path']), (error: AgentSessionError) => {
    assert.equal(error.code, 'missing_dependency');
    assert.match(error.message, /@switchyard\/no-such-pty-module: Cannot find (package|module)/);
    assert.match(error.message, /node:path: node:path has no spawn function/);
    assert.match(error.message, /`npm install @lydell\/node-pty`/);
    assert.match(error.message, /`npm install node-pty`, which builds from source with node-gyp/);
    assert.match(error.message, /`apt-get install python3 make g\+\+`/);
    return true;
  });
});
