// Builds the CLI and server into dist/ (one entry, a chunk per lazily loaded command) and the page.
import { build } from 'esbuild';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const pkg = JSON.parse(await readFile(new URL('package.json', root), 'utf8'));

// The CLI's own packages are bundled, so a pipeline step reads a few files instead of resolving
// hundreds; everything else (the server's packages, native and wasm ones) stays external.
const BUNDLED = new Set(['commander', 'ky', 'chalk', 'cli-table3', 'conf', '@inquirer/prompts', 'zod']);
const cliPackagesOnly = {
  name: 'cli-packages-only',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:') || args.importer.includes('/node_modules/')) return undefined;
      const name = args.path.split('/').slice(0, args.path.startsWith('@') ? 2 : 1).join('/');
      return BUNDLED.has(name) ? undefined : { path: args.path, external: true };
    });
  },
};

await rm(new URL('dist', root), { recursive: true, force: true });
await build({
  entryPoints: { repoadmin: 'bin/repoadmin.ts' },
  plugins: [cliPackagesOnly],
  // Bundled CommonJS packages (commander, ajv) require Node's built-ins.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  absWorkingDir: root.pathname,
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
  define: { __REPOADMIN_VERSION__: JSON.stringify(pkg.version) },
  logLevel: 'warning',
});

// The package page: public/src bundled and minified under content-hashed names, which
// index.html is rewritten to load; other static files copied as they are.
const page = await build({
  entryPoints: { main: 'public/src/main.ts', styles: 'public/src/styles.css' },
  absWorkingDir: root.pathname,
  outdir: 'dist/public/assets',
  entryNames: '[name]-[hash]',
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome111', 'firefox115', 'safari16.4'],
  minify: true,
  sourcemap: 'linked',
  metafile: true,
  legalComments: 'linked',
  logLevel: 'warning',
});
const entries = { 'public/src/main.ts': 'main.js', 'public/src/styles.css': 'styles.css' };
const hashed = {};
for (const [file, output] of Object.entries(page.metafile.outputs)) {
  const name = entries[output.entryPoint];
  if (name) hashed[name] = file.slice('dist/public/'.length);
}
let html = await readFile(new URL('public/index.html', root), 'utf8');
for (const [name, file] of Object.entries(hashed)) {
  if (!html.includes(`"assets/${name}"`)) throw new Error(`public/index.html does not load assets/${name}`);
  html = html.replace(`"assets/${name}"`, `"${file}"`);
}
await writeFile(new URL('dist/public/index.html', root), html);
for (const name of ['favicon.svg', 'api']) {
  const from = new URL(`public/${name}`, root);
  if (existsSync(from)) await cp(from, new URL(`dist/public/${name}`, root), { recursive: true });
}
