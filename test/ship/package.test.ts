// The packaging fields: the launcher, what goes in the archive, and that every package the bundle
// loads at run time is a (bundled) dependency while build and test tools are not.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './api-files.js';

const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
  files: string[];
  bundleDependencies: unknown;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

function jsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return name === 'public' ? [] : jsFiles(file);
    return file.endsWith('.js') || file.endsWith('.cjs') ? [file] : [];
  });
}

const PACKAGE_NAME = /^(?:node:)?(?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(?:\/[\w./-]*)?$/i;

/** Package names the bundle imports or requires (not the code strings of ajv's code generator). */
function externalPackages(): Set<string> {
  const found = new Set<string>();
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|(?<![`'"])\brequire\d*\(\s*)["']([^"'./][^"']*)["']/g;
  for (const file of jsFiles(path.join(ROOT, 'dist'))) {
    for (const m of readFileSync(file, 'utf8').matchAll(pattern)) {
      const spec = m[1]!;
      // Only what can name a package: the word `from` also ends quoted text in SQL the bundle holds.
      if (!PACKAGE_NAME.test(spec)) continue;
      if (spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]!)) continue;
      found.add(spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/'));
    }
  }
  return found;
}

describe('package.json', () => {
  it('points the repoadmin command at the launcher, an executable node script', () => {
    expect(pkg.bin).toEqual({ repoadmin: 'bin/repoadmin' });
    const launcher = path.join(ROOT, pkg.bin.repoadmin!);
    expect(readFileSync(launcher, 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
    expect(statSync(launcher).mode & 0o111).not.toBe(0);
    expect(pkg.files).toEqual(expect.arrayContaining(['bin/repoadmin', 'bin/package.json', 'dist/']));
  });

  it('bundles every run-time dependency, so the archive installs offline', () => {
    expect(pkg.bundleDependencies).toBe(true);
  });

  it('lists every package the built bundle loads as a dependency', () => {
    const external = externalPackages();
    expect(external.size).toBeGreaterThan(5);
    expect([...external].filter((name) => !(name in pkg.dependencies))).toEqual([]);
  });

  it('keeps build and test tools out of the run-time dependencies', () => {
    for (const tool of ['vitest', 'typescript', 'esbuild', 'playwright-core', 'tsx', 'newman', '@apidevtools/swagger-parser', 'dockerfile-ast']) {
      expect(pkg.dependencies).not.toHaveProperty(tool);
    }
    expect(Object.keys(pkg.dependencies).filter((name) => name.startsWith('@types/'))).toEqual([]);
  });
});
