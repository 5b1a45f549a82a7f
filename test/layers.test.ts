// The layers point one way (docs/architecture.md, "The layers"): common/ imports no other layer, server/ and
// cli/ never import each other (except that the `server` command starts the server), and the page
// takes only common/. Every import of every .ts file is read, static, type-only and dynamic.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const LAYERS = ['common', 'server', 'cli', 'public/src'] as const;
type Layer = (typeof LAYERS)[number] | 'test' | 'other';

/** What each layer may import besides itself (packages and Node's modules are not checked). */
const ALLOWED: Record<(typeof LAYERS)[number], Layer[]> = {
  common: [],
  server: ['common'],
  cli: ['common'],
  'public/src': ['common'],
};
/** The one door from the command line into the server: `repoadmin server` starts it. */
const SERVER_COMMAND = 'cli/commands/server/';

function layerOf(file: string): Layer {
  const relative = path.relative(ROOT, file).split(path.sep).join('/');
  for (const layer of LAYERS) if (relative.startsWith(`${layer}/`)) return layer;
  return relative.startsWith('test/') ? 'test' : 'other';
}

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

interface Import {
  from: string;
  to: string;
}

/** Every relative import of a file, resolved to the file it names. */
function importsOf(file: string): Import[] {
  const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map((i) => i.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => ({ from: file, to: path.resolve(path.dirname(file), name.replace(/\.js$/, '.ts')) }));
}

function rel(file: string): string {
  return path.relative(ROOT, file).split(path.sep).join('/');
}

function isAllowed({ from, to }: Import): boolean {
  const source = layerOf(from) as (typeof LAYERS)[number];
  const target = layerOf(to);
  if (target === source || ALLOWED[source].includes(target)) return true;
  // A module's own tests may use the shared test helpers and fakes.
  if (target === 'test' && from.endsWith('.test.ts')) return true;
  return source === 'cli' && target === 'server' && rel(from).startsWith(SERVER_COMMAND);
}

const files = LAYERS.flatMap((layer) => tsFiles(path.join(ROOT, layer)));
const imports = files.flatMap(importsOf);

describe('layers', () => {
  it('reads the imports of every layer, dynamic ones included', () => {
    for (const layer of LAYERS) expect(files.some((f) => layerOf(f) === layer)).toBe(true);
    expect(imports.map((i) => `${rel(i.from)} -> ${rel(i.to)}`)).toContain('cli/commands/server/index.ts -> server/main.ts');
  });

  it('points one way: common imports no one, server and cli not each other, the page only common', () => {
    const wrong = imports.filter((i) => !isAllowed(i)).map((i) => `${rel(i.from)} imports ${rel(i.to)}`);
    expect(wrong).toEqual([]);
  });

  it('catches an import across the layers', () => {
    const at = (file: string) => path.join(ROOT, file);
    expect(isAllowed({ from: at('server/main.ts'), to: at('cli/deps.ts') })).toBe(false);
    expect(isAllowed({ from: at('common/errors.ts'), to: at('server/config.ts') })).toBe(false);
    expect(isAllowed({ from: at('cli/commands/publish/publish.ts'), to: at('server/config.ts') })).toBe(false);
    expect(isAllowed({ from: at('public/src/api.ts'), to: at('cli/api/client.ts') })).toBe(false);
    expect(isAllowed({ from: at('server/app.ts'), to: at('test/helpers/db.ts') })).toBe(false);
  });
});
