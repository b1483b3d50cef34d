/**
 * Package builds as npm ships them: every tsup config whose entries import `node:test` (the `/contract`
 * suites) must keep the `node:` prefix. tsup strips it by default, and `import 'test'` fails to load.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Options } from 'tsup';

const packagesDir = fileURLToPath(new URL('../packages/', import.meta.url));

/** Whether a source file, or a relative import of it, imports `node:test`. */
function importsNodeTest(file: string, seen = new Set<string>()): boolean {
  if (seen.has(file)) return false;
  seen.add(file);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  if (/from ['"]node:test['"]/.test(text)) return true;
  for (const [, relative] of text.matchAll(/from ['"](\.{1,2}\/[^'"]+)\.js['"]/g)) {
    if (importsNodeTest(join(file, '..', `${relative}.ts`), seen)) return true;
  }
  return false;
}

for (const name of readdirSync(packagesDir)) {
  const configPath = join(packagesDir, name, 'tsup.config.ts');
  if (!existsSync(configPath)) continue;
  test(`${name}: a build with an entry importing node:test keeps the node: prefix`, async () => {
    const loaded = (await import(configPath)) as { default: Options | Options[] };
    const configs = Array.isArray(loaded.default) ? loaded.default : [loaded.default];
    for (const config of configs) {
      const entries = Object.entries(config.entry as Record<string, string>);
      const testing = entries.filter(([, path]) => importsNodeTest(join(packagesDir, name, path))).map(([entry]) => entry);
      if (testing.length === 0) continue;
      assert.equal(config.removeNodeProtocol, false, `${name}'s ${testing.join(', ')} import node:test: set removeNodeProtocol: false`);
    }
  });
}
