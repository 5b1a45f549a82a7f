// No import cycles in the repository's TypeScript, type-only and dynamic imports included, beside
// the layer rules of test/layers.test.ts: a cycle lets load order decide what a module sees, and
// modules in a cycle can only be read, tested and moved together. madge reads the imports with
// TypeScript's parser.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import madge from 'madge';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
/** Every folder of TypeScript that ships or builds (tests import from these, never the other way). */
const SOURCES = ['bin', 'cli', 'common', 'public/src', 'scripts', 'server'];

interface Graph {
  /** Each cycle as the files in it, relative to `baseDir`. */
  cycles: string[][];
  /** Relative imports madge could not resolve to a file: a cycle through one would go unseen. */
  unresolved: string[];
  files: number;
}

async function importGraph(paths: string[], baseDir: string): Promise<Graph> {
  const graph = await madge(paths, {
    baseDir,
    fileExtensions: ['ts', 'mts'],
    tsConfig: path.join(ROOT, 'tsconfig.json'),
    detectiveOptions: { ts: { skipTypeImports: false, skipAsyncImports: false } },
  });
  return {
    cycles: graph.circular(),
    unresolved: graph.warnings().skipped.filter((name) => name.startsWith('.')),
    files: Object.keys(graph.obj()).length,
  };
}

const shown = (cycles: string[][]) => cycles.map((cycle) => [...cycle, cycle[0]].join(' -> '));

const scratch: string[] = [];
afterAll(async () => {
  await Promise.all(scratch.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('import cycles', () => {
  it('there are none, type-only and dynamic imports included', async () => {
    const { cycles, unresolved, files } = await importGraph(
      SOURCES.map((folder) => path.join(ROOT, folder)),
      ROOT,
    );
    expect(files).toBeGreaterThan(100);
    expect(unresolved).toEqual([]);
    // The cycles found, one per line, each back to where it began.
    expect(shown(cycles)).toEqual([]);
  }, 120_000);

  it('catches a cycle made only of type imports, and one through a dynamic import', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'repoadmin-cycles-'));
    scratch.push(dir);
    await writeFile(path.join(dir, 'a.ts'), "import type { B } from './b.js';\nexport interface A { b?: B }\n");
    await writeFile(path.join(dir, 'b.ts'), "import type { A } from './a.js';\nexport interface B { a?: A }\n");
    await writeFile(path.join(dir, 'c.ts'), "export const load = () => import('./d.js');\n");
    await writeFile(path.join(dir, 'd.ts'), "import { load } from './c.js';\nexport const again = load;\n");
    await writeFile(path.join(dir, 'e.ts'), "import type { A } from './a.js';\nexport type E = A;\n");
    const { cycles } = await importGraph([dir], dir);
    expect(shown(cycles).sort()).toEqual(['a.ts -> b.ts -> a.ts', 'c.ts -> d.ts -> c.ts']);
  }, 60_000);
});
