import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FakeScheduler } from '@switchyard/runtime';
import { loggingConfigSchema } from '../config/schemas.js';
import { createLogger } from './logger.js';
import { RotatingFileStream } from './rotatingFileStream.js';

const root = await mkdtemp(join(tmpdir(), 'rotation-'));
after(() => rm(root, { recursive: true, force: true }));
const DAY = 86_400_000;

test('writing past max_size rotates, every file stays within max_size, and max_backups is respected', async () => {
  const dir = join(root, 'size');
  const clock = new FakeScheduler(Date.parse('2026-03-01T00:00:00Z'));
  const config = loggingConfigSchema.parse({
    output: 'file',
    file: join(dir, 'gateway.log'),
    rotation: { max_size: '4K', max_backups: 3, max_age: '30d' },
  });
  const { logger, close } = createLogger(config, { clock });
  const lines = 400; // ≈ 100 bytes each: ≈ 40 KiB, so about ten rotations
  for (let i = 0; i < lines; i++) {
    logger.info({ i, pad: 'x'.repeat(20) }, 'line');
    if (i % 40 === 0) clock.set(clock.now() + 1000); // distinct backup names by time
  }
  await close();
  const names = (await readdir(dir)).sort();
  assert.equal(names.length, 4, `current + 3 backups: ${names.join(', ')}`);
  assert.ok(names.includes('gateway.log'));
  for (const name of names) {
    assert.match(name, /^gateway(-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}Z(-\d+)?)?\.log$/);
    assert.ok((await stat(join(dir, name))).size <= 4096, `${name} within max_size`);
  }
  // The newest lines survive, in order, and no line is torn.
  const current = (await readFile(join(dir, 'gateway.log'), 'utf8')).trim().split('\n');
  const last = JSON.parse(current.at(-1)!);
  assert.equal(last.i, lines - 1);
  const backups = names.filter((n) => n !== 'gateway.log');
  let previous = -1;
  for (const name of [...backups, 'gateway.log']) {
    for (const text of (await readFile(join(dir, name), 'utf8')).trim().split('\n')) {
      const { i } = JSON.parse(text) as { i: number };
      assert.ok(i > previous, 'lines in order across backups');
      previous = i;
    }
  }
});

test('backups older than max_age are deleted at the next rotation or start', async () => {
  const dir = join(root, 'age');
  const clock = new FakeScheduler(Date.parse('2026-03-01T00:00:00Z'));
  const file = join(dir, 'app.log');
  const stream = new RotatingFileStream({ path: file, maxSize: 1024, maxAgeMs: 7 * DAY, maxBackups: 0, clock, sync: true });
  stream.write('a'.repeat(600));
  stream.write('b'.repeat(600)); // rotates: backup 1 at day 0
  clock.set(clock.now() + 5 * DAY);
  stream.write('c'.repeat(600)); // rotates: backup 2 at day 5
  assert.equal(stream.backups().length, 2);
  clock.set(clock.now() + 3 * DAY); // day 8: the day-0 backup is now 8 days old
  stream.write('d'.repeat(600)); // rotates: prunes
  const backups = stream.backups();
  assert.equal(backups.length, 2, 'day 5 and day 8 stay; day 0 is gone');
  assert.ok(backups.every((b) => !b.includes('2026-03-01T')));
  await stream.close();

  // A restart prunes as well.
  clock.set(clock.now() + 30 * DAY);
  const reopened = new RotatingFileStream({ path: file, maxSize: 1024, maxAgeMs: 7 * DAY, clock });
  assert.equal(reopened.backups().length, 0);
  await reopened.close();
});

test('an existing file counts toward max_size; a line larger than max_size still gets written', async () => {
  const dir = join(root, 'existing');
  const file = join(dir, 'x.log');
  const clock = new FakeScheduler(Date.parse('2026-03-01T00:00:00Z'));
  const first = new RotatingFileStream({ path: file, maxSize: 100, clock, sync: true });
  first.write('y'.repeat(90));
  await first.close();
  const second = new RotatingFileStream({ path: file, maxSize: 100, clock, sync: true });
  second.write('z'.repeat(20));
  assert.equal(second.backups().length, 1, 'the 90 existing bytes + 20 exceed 100');
  second.write('w'.repeat(500));
  await second.close();
  assert.equal(await readFile(file, 'utf8'), 'w'.repeat(500));
  assert.equal((await readdir(dir)).length, 3);
});

test('buffered lines reach the file on flush, and files are not world-readable', async () => {
  const file = join(root, 'mode', 'm.log');
  const stream = new RotatingFileStream({ path: file, maxSize: 0 });
  stream.write('one\n');
  stream.write('two\n');
  stream.flushSync();
  assert.equal(await readFile(file, 'utf8'), 'one\ntwo\n');
  assert.equal((await stat(file)).mode & 0o007, 0);
  await stream.close();
  assert.equal(stream.write('late\n'), false);
  await writeFile(join(root, 'mode', 'unrelated-2026.log'), 'keep');
  assert.ok((await readdir(join(root, 'mode'))).includes('unrelated-2026.log'));
});
