/**
 * Package builds as npm ships them: every tsup config whose entries import `node:test` (the `/contract`
 * suites) must keep the `node:` prefix. tsup strips it by default, and `import 'test'` fails to load.
 * And what npm ships: no module that only tests use (a scripted transport, fixtures) goes into a
 * package's tarball, though `files` ships `src`.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Options } from 'tsup';

const packagesDir = fileURLToPath(new URL('../packages/', import.meta.url));

/** The source file's relative imports (static, re-exports and dynamic), as the `.ts` files they name. */
function relativeImports(text: string, file: string): string[] {
  return [...text.matchAll(/(?:from|import\()\s*['"](\.{1,2}\/[^'"]+)\.js['"]/g)].map(([, path]) => join(file, '..', `${path}.ts`));
}

function readSource(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Whether a source file, or a relative import of it, imports `node:test`. */
function importsNodeTest(file: string, seen = new Set<string>()): boolean {
  if (seen.has(file)) return false;
  seen.add(file);
  const text = readSource(file);
  if (text === undefined) return false;
  if (/from ['"]node:test['"]/.test(text)) return true;
  return relativeImports(text, file).some((imported) => importsNodeTest(imported, seen));
}

/** Every source file `starts` import, directly or not (the starts included). */
function reachableFrom(starts: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const queue = [...starts];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (seen.has(file)) continue;
    const text = readSource(file);
    if (text === undefined) continue;
    seen.add(file);
    queue.push(...relativeImports(text, file));
  }
  return seen;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts'))
    .map((path) => join(dir, path));
}

async function tsupConfigs(name: string): Promise<Options[]> {
  const loaded = (await import(join(packagesDir, name, 'tsup.config.ts'))) as { default: Options | Options[] };
  return Array.isArray(loaded.default) ? loaded.default : [loaded.default];
}

for (const name of readdirSync(packagesDir)) {
  const configPath = join(packagesDir, name, 'tsup.config.ts');
  if (!existsSync(configPath)) continue;
  test(`${name}: a build with an entry importing node:test keeps the node: prefix`, async () => {
    for (const config of await tsupConfigs(name)) {
      const entries = Object.entries(config.entry as Record<string, string>);
      const testing = entries.filter(([, path]) => importsNodeTest(join(packagesDir, name, path))).map(([entry]) => entry);
      if (testing.length === 0) continue;
      assert.equal(config.removeNodeProtocol, false, `${name}'s ${testing.join(', ')} import node:test: set removeNodeProtocol: false`);
    }
  });
  test(`${name}: the tarball leaves out the modules only tests use`, async () => {
    const root = join(packagesDir, name);
    const entries = (await tsupConfigs(name)).flatMap((config) => Object.values(config.entry as Record<string, string>));
    const shipped = reachableFrom(entries.map((path) => join(root, path)));
    const tests = sourceFiles(join(root, 'src')).filter((file) => file.endsWith('.test.ts'));
    const testOnly = [...reachableFrom(tests)].filter((file) => !file.endsWith('.test.ts') && !shipped.has(file) && file.startsWith(root));
    const packed = JSON.parse(execFileSync('pnpm', ['pack', '--dry-run', '--json'], { cwd: root, encoding: 'utf8' })) as {
      files: { path: string }[];
    };
    const published = new Set(packed.files.map((f) => f.path));
    assert.deepEqual(
      testOnly.map((file) => relative(root, file)).filter((path) => published.has(path)),
      [],
      'test-only modules are published: put them in a testing/ folder that `files` leaves out',
    );
  });
}
