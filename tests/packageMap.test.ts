/**
 * The package map, enforced. Each package may import only the packages below it on the map in
 * docs/ARCHITECTURE.md (the table here is that map, written out: a checked-in copy, not read from
 * the code). The test reads every package's `package.json` and every source file's imports, and
 * fails on an import that runs up the map, on a cycle between packages, and on a runtime import
 * cycle between the modules of one package (type-only imports are erased, so they do not count).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const packagesDir = fileURLToPath(new URL('../packages/', import.meta.url));

/**
 * What each package may import at run time (its own name aside). `test-support` is a private
 * package that any package's tests may use, and nothing else.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  'audit-chain': [],
  runtime: [],
  translate: [],
  'http-kit': [],
  'core-routing': ['runtime'],
  credentials: ['runtime', 'core-routing'],
  observability: ['runtime', 'core-routing'],
  relay: ['runtime', 'core-routing', 'translate', 'audit-chain'],
  workflow: ['audit-chain', 'runtime', 'observability'],
  'server-http': ['runtime', 'core-routing', 'translate', 'relay', 'credentials', 'observability', 'http-kit', 'audit-chain'],
  'agent-session': ['runtime', 'http-kit'],
  'workflow-http': ['workflow', 'http-kit', 'runtime', 'audit-chain', 'observability'],
  'server-grpc': ['workflow', 'http-kit', 'runtime', 'audit-chain', 'observability'],
  cli: ['workflow', 'workflow-http', 'server-grpc', 'agent-session', 'observability', 'audit-chain', 'runtime', 'http-kit'],
  'test-support': [],
};

/** What tests may import beyond the runtime map: the test helpers, and packages that only tests use. */
const TESTS_MAY_ALSO_IMPORT: Record<string, readonly string[]> = {
  relay: ['credentials'],
  // A real ACP agent's test points the agent at the gateway.
  'agent-session': ['server-http'],
};

const packages = readdirSync(packagesDir).filter((name) => existsSync(join(packagesDir, name, 'package.json')));

interface Imported {
  file: string;
  specifier: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts') && !path.includes('node_modules'))
    .map((path) => join(dir, path));
}

const IMPORT = /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/g;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file: string): Imported[] {
  const text = readFileSync(file, 'utf8');
  const found: Imported[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const clause = match[0];
    // `import { type A, type B }` with every name typed is erased too.
    const braces = /\{([^}]*)\}/.exec(clause)?.[1];
    const allTyped = braces?.split(',').every((n) => n.trim() === '' || n.trim().startsWith('type ')) === true;
    found.push({ file, specifier: match[3]!, typeOnly: Boolean(match[2]) || (allTyped && !/\bimport\s+[A-Za-z_$]/.test(clause)) });
  }
  for (const match of text.matchAll(DYNAMIC)) found.push({ file, specifier: match[1]!, typeOnly: false });
  return found;
}

const workspacePackage = (specifier: string): string | undefined =>
  specifier.startsWith('@switchyard/') ? specifier.slice('@switchyard/'.length).split('/')[0] : undefined;

const isTestFile = (file: string) => file.endsWith('.test.ts') || /[/\\](test|testing)[/\\]/.test(file);

test('the map names every package, and only packages that exist', () => {
  assert.deepEqual([...packages].sort(), Object.keys(MAY_IMPORT).sort());
});

for (const name of packages) {
  const root = join(packagesDir, name);
  const allowed = new Set([name, ...(MAY_IMPORT[name] ?? [])]);

  test(`${name}: package.json depends on nothing above it on the map`, () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies'] as const) {
      for (const dep of Object.keys(manifest[field] ?? {})) {
        const pkg = workspacePackage(dep);
        if (pkg) assert.ok(allowed.has(pkg), `${name}'s ${field} names ${dep}, which is not below it on the map`);
      }
    }
  });

  test(`${name}: no source file imports a package above it on the map`, () => {
    const offences: string[] = [];
    for (const file of sourceFiles(join(root, 'src')).concat(sourceFiles(join(root, 'test')))) {
      const mayAlso = isTestFile(file) ? ['test-support', ...(TESTS_MAY_ALSO_IMPORT[name] ?? [])] : [];
      for (const { specifier } of importsOf(file)) {
        const pkg = workspacePackage(specifier);
        if (pkg && !allowed.has(pkg) && !mayAlso.includes(pkg)) offences.push(`${relative(packagesDir, file)} imports ${specifier}`);
        if (specifier.startsWith('.')) {
          const target = join(dirname(file), specifier);
          if (!target.startsWith(root)) offences.push(`${relative(packagesDir, file)} reaches outside its package: ${specifier}`);
        }
      }
    }
    assert.deepEqual(offences, []);
  });

  test(`${name}: no runtime import cycle between its modules`, () => {
    const files = sourceFiles(join(root, 'src')).filter((file) => !isTestFile(file));
    const edges = new Map<string, string[]>();
    for (const file of files) {
      edges.set(
        file,
        importsOf(file)
          .filter((i) => !i.typeOnly && i.specifier.startsWith('.'))
          .map((i) => join(dirname(file), i.specifier.replace(/\.js$/, '.ts'))),
      );
    }
    const cycle = findCycle(edges);
    assert.equal(cycle, undefined, `runtime import cycle: ${cycle?.map((f) => relative(root, f)).join(' -> ')}`);
  });
}

test('no cycle between packages', () => {
  const edges = new Map<string, string[]>();
  for (const name of packages) {
    const manifest = JSON.parse(readFileSync(join(packagesDir, name, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, string> | undefined
    >;
    const deps = ['dependencies', 'devDependencies', 'peerDependencies'].flatMap((field) => Object.keys(manifest[field] ?? {}));
    edges.set(
      name,
      deps.map(workspacePackage).filter((pkg): pkg is string => pkg !== undefined && pkg !== name),
    );
  }
  const cycle = findCycle(edges);
  assert.equal(cycle, undefined, `package cycle: ${cycle?.join(' -> ')}`);
});

test('the cycle finder finds a cycle and passes a tree (so the checks above can fail)', () => {
  const cyclic = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a']],
  ]);
  assert.deepEqual(findCycle(cyclic), ['a', 'b', 'c', 'a']);
  const tree = new Map([
    ['a', ['b', 'c']],
    ['b', ['c']],
    ['c', []],
  ]);
  assert.equal(findCycle(tree), undefined);
});

/** A cycle in a directed graph, as the path that closes it, or undefined. */
function findCycle(edges: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'done') return undefined;
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node];
    state.set(node, 'open');
    path.push(node);
    for (const next of edges.get(node) ?? []) {
      if (!edges.has(next)) continue;
      const found = visit(next);
      if (found) return found;
    }
    path.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of edges.keys()) {
    const found = visit(node);
    if (found) return found;
  }
  return undefined;
}
