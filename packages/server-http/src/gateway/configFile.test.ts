import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { GatewayConfig } from './config/schema.js';
import { ConfigFile } from './configFile.js';

const dir = await mkdtemp(join(tmpdir(), 'config-file-'));
after(() => rm(dir, { recursive: true, force: true }));

const textWithPort = (port: number) => `port: ${port}\nproviders:\n  alpha: { kind: mock, models: [m] }\n`;

/** A ConfigFile over a fresh file holding `text`, recording the ports it applies (not watching: changes are reported by hand). */
async function configFileHolding(text: string, name: string, onApply: (port: number) => void = () => {}) {
  const path = join(dir, name);
  await writeFile(path, text);
  const appliedPorts: number[] = [];
  const file: ConfigFile = new ConfigFile({
    path,
    knownKinds: () => ['mock'],
    apply: (config: GatewayConfig, how) => {
      appliedPorts.push(config.port);
      file.applied(how.fromFile); // as Gateway.reload does
      onApply(config.port);
    },
    logError: (fields, message) => assert.fail(`${message} ${JSON.stringify(fields)}`),
  });
  return { path, file, appliedPorts };
}

describe('ConfigFile', () => {
  test('a change reported before the management API writes and applies a newer text is not applied over it', async () => {
    const { path, file, appliedPorts } = await configFileHolding(textWithPort(1), 'overtaken.yaml');
    // The watch reports an edit (port 2 on disk) ...
    await writeFile(path, textWithPort(2));
    const reading = file.applyIfChanged({ signalled: false });
    // ... and before its read lands, the API writes and applies port 3 (its file write is still on its way).
    file.applied(textWithPort(3));
    await reading;
    assert.deepEqual(appliedPorts, [], 'the older text read from the file must not undo the newer one');
  });

  test('edits reported one after another are each applied, in order', async () => {
    const { path, file, appliedPorts } = await configFileHolding(textWithPort(1), 'in-order.yaml');
    await writeFile(path, textWithPort(2));
    const first = file.applyIfChanged({ signalled: false });
    await first;
    await writeFile(path, textWithPort(3));
    await file.applyIfChanged({ signalled: false });
    assert.deepEqual(appliedPorts, [2, 3]);
  });

  test('two reports queued at once both read the file: applying the first does not count as a newer write', async () => {
    // An operator's next edit lands while the first is applied.
    const { path, file, appliedPorts } = await configFileHolding(textWithPort(1), 'queued.yaml', (port) => {
      if (port === 2) writeFileSync(path, textWithPort(4));
    });
    await writeFile(path, textWithPort(2));
    const first = file.applyIfChanged({ signalled: false });
    const second = file.applyIfChanged({ signalled: false });
    await Promise.all([first, second]);
    assert.deepEqual(appliedPorts, [2, 4]);
  });

  test('a text already applied is not applied again', async () => {
    const { file, appliedPorts } = await configFileHolding(textWithPort(5), 'same.yaml');
    file.applied(textWithPort(5));
    await file.applyIfChanged({ signalled: false });
    assert.deepEqual(appliedPorts, []);
  });
});
