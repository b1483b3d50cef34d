import assert from 'node:assert/strict';
import { test } from 'node:test';
import { processIO } from './io.js';

test('processIO takes SIGINT/SIGTERM over only when a command asks for its stop signal (others die on Ctrl-C or kill as usual)', () => {
  const before = { int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') };
  const io = processIO();
  const copy = { ...io, env: {} }; // commands copy the streams with a changed field
  assert.equal(process.listenerCount('SIGINT'), before.int, 'making the streams installs no SIGINT handler');
  assert.equal(process.listenerCount('SIGTERM'), before.term, 'nor a SIGTERM one');
  assert.equal('stopSignal' in copy, false, 'a spread copy does not carry (or start) the stop signal');

  const stop = io.stopSignal;
  assert.ok(stop instanceof Promise);
  assert.equal(io.stopSignal, stop, 'one promise, however often it is read');
  assert.equal(process.listenerCount('SIGINT'), before.int + 1);
  assert.equal(process.listenerCount('SIGTERM'), before.term + 1);
  process.emit('SIGTERM', 'SIGTERM');
  return stop.then((signal) => {
    assert.equal(signal, 'SIGTERM');
    assert.equal(process.listenerCount('SIGINT'), before.int + 1, 'the SIGINT handler stays until its own signal');
    assert.equal(process.listenerCount('SIGTERM'), before.term, 'once: a second SIGTERM kills as usual');
  });
});
