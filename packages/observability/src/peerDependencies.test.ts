import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';

// The optional peers must be installable together: a consumer's npm refuses a set whose peer ranges do not meet.
const manifest = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
  peerDependencies: Record<string, string>;
};
const manifestOf = async (name: string) =>
  JSON.parse(await readFile(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8')) as {
    peerDependencies?: Record<string, string>;
  };

type Version = [number, number, number];
const parse = (text: string): Version => text.split('.').map(Number) as Version;
const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** Whether `version` satisfies `range`, for the comparators these manifests use: ^x.y.z, >=x.y.z, <x.y.z (space = and). */
function satisfies(version: Version, range: string): boolean {
  return range.split(/\s+/).every((comparator) => {
    const [, op, bound] = /^(\^|>=|<)?(\d+\.\d+\.\d+)$/.exec(comparator) ?? assert.fail(`unsupported range ${range}`);
    const b = parse(bound!);
    if (op === '>=') return compare(version, b) >= 0;
    if (op === '<') return compare(version, b) < 0;
    if (op === '^') return compare(version, b) >= 0 && version[0] === b[0] && (b[0] > 0 || version[1] === b[1]);
    return compare(version, b) === 0;
  });
}

test('an @opentelemetry/api version satisfies this package and every OpenTelemetry peer it names', async () => {
  const ranges = [manifest.peerDependencies['@opentelemetry/api']!];
  for (const name of Object.keys(manifest.peerDependencies).filter((n) => n.startsWith('@opentelemetry/') && n !== '@opentelemetry/api')) {
    const range = (await manifestOf(name)).peerDependencies?.['@opentelemetry/api'];
    if (range !== undefined) ranges.push(range);
  }
  assert.ok(ranges.length > 1, 'the OpenTelemetry SDK packages name @opentelemetry/api as a peer');
  // Candidates: every bound the ranges mention, and the last patch releases below each upper bound.
  const candidates = ranges
    .flatMap((r) => [...r.matchAll(/(\d+)\.(\d+)\.(\d+)/g)])
    .flatMap(([, major, minor, patch]) => [
      [Number(major), Number(minor), Number(patch)] as Version,
      [Number(major), Number(minor) - 1, 99] as Version,
    ]);
  const common = candidates.find((v) => ranges.every((r) => satisfies(v, r)));
  assert.ok(common, `no @opentelemetry/api version satisfies all of ${ranges.join(' | ')}`);
});
