// Builds the CLI and server into dist/ (one entry, a chunk per lazily loaded command) and the page.
import { build } from 'esbuild';
import { cp, mkdir, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const pkg = JSON.parse(await readFile(new URL('package.json', root), 'utf8'));

await rm(new URL('dist', root), { recursive: true, force: true });
await build({
  entryPoints: { repoadmin: 'bin/repoadmin.ts' },
  absWorkingDir: root.pathname,
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
  define: { __REPOADMIN_VERSION__: JSON.stringify(pkg.version) },
  logLevel: 'warning',
});

// The package page: static files as they are, plus the bundled script when there is one.
await mkdir(new URL('dist/public', root), { recursive: true });
for (const name of ['index.html', 'api']) {
  const from = new URL(`public/${name}`, root);
  if (existsSync(from)) await cp(from, new URL(`dist/public/${name}`, root), { recursive: true });
}
