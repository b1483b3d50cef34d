/**
 * What every package's manifest must say, so that none drifts when a package is added or moved:
 * a LICENSE file beside each published package (npm ships it whatever `files` says), keywords, no
 * placeholder `repository` URL (the field stays out until the real one is known), and one Node
 * range, the root's, which the strictest dependency needs (`@linear/sdk` wants ^20.19).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const rootDir = fileURLToPath(new URL('..', import.meta.url));
const packagesDir = join(rootDir, 'packages');

interface Manifest {
  name: string;
  private?: boolean;
  keywords?: unknown;
  repository?: unknown;
  engines?: { node?: string };
}

const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
const root = readManifest(rootDir);
const packages = readdirSync(packagesDir)
  .map((name) => join(packagesDir, name))
  .filter((dir) => existsSync(join(dir, 'package.json')));

test('the repository has a LICENSE and one Node range, at least 20.19', () => {
  assert.ok(existsSync(join(rootDir, 'LICENSE')));
  assert.equal(root.engines?.node, '>=20.19.0');
});

for (const dir of packages) {
  const manifest = readManifest(dir);
  test(`${manifest.name}: keywords, no placeholder repository, the root's Node range${manifest.private ? '' : ', a LICENSE'}`, () => {
    assert.ok(Array.isArray(manifest.keywords) && manifest.keywords.length > 0, 'keywords are missing');
    assert.doesNotMatch(JSON.stringify(manifest.repository ?? ''), /example\.invalid/, 'a placeholder repository URL');
    if (manifest.private) return;
    assert.ok(existsSync(join(dir, 'LICENSE')), 'LICENSE is missing');
    assert.equal(manifest.engines?.node, root.engines?.node, "engines.node differs from the root's");
  });
}
