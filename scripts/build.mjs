// Builds the CLI and server into dist/ (one CommonJS file and, on Node 20, its V8 code cache) and the page.
import { build } from 'esbuild';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import nodeModule from 'node:module';

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

// commander requires node:child_process on load (4-5 ms of every run) for stand-alone executable
// subcommands, which repoadmin has none of: it gets child_process on first use instead.
const lazyChildProcess = {
  name: 'lazy-child-process-for-commander',
  setup(b) {
    b.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer) ? { path: 'child_process', namespace: 'lazy-child-process' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-child-process' }, () => ({
      contents: "module.exports = new Proxy({}, { get: (_, name) => require('node:child_process')[name] });",
      loader: 'js',
    }));
  },
};

await rm(new URL('dist', root), { recursive: true, force: true });
// One CommonJS file rather than ES modules: Node 20 keeps no compiled code of an ES module from one
// run to the next, while bin/repoadmin runs this file there through a V8 code cache (vm.Script's
// cachedData), which spares each pipeline step most of the compiling (Node 22.1 and later cache it
// themselves). Lazily loaded commands stay lazy: their modules are wrapped and run on first
// import(), inside the same file.
const cli = await build({
  entryPoints: { repoadmin: 'bin/repoadmin.mts' },
  plugins: [lazyChildProcess, cliPackagesOnly],
  banner: { js: "const __import_meta_url = require('node:url').pathToFileURL(__filename).href;" },
  absWorkingDir: root.pathname,
  outdir: 'dist',
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  // Each run reads the whole file (V8 wants the source beside its cache): no white space or
  // comments (licences go to repoadmin.cjs.LEGAL.txt), which also keeps it ASCII, the quicker to
  // decode. Names are kept, for readable stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'linked',
  define: { __REPOADMIN_VERSION__: JSON.stringify(pkg.version), 'import.meta.url': '__import_meta_url' },
  metafile: true,
  logLevel: 'warning',
});
// A script run from a code cache has no way to load an ES module: an import() left in the bundle
// (of an external package or built-in) would fail at run time, so it fails the build instead.
const leftImports = Object.values(cli.metafile.outputs).flatMap((output) => output.imports.filter((i) => i.kind === 'dynamic-import'));
if (leftImports.length) throw new Error(`dist/repoadmin.cjs would import() ${leftImports.map((i) => i.path).join(', ')}: load it with require or process.getBuiltinModule`);
// A run of --help checks that the bundle starts. On Node 20 it also writes the code cache
// (bin/repoadmin does when it finds none), holding what every command starts with: commander, each
// command's options, the request schemas. Node 22.1 and later keep their own compile cache outside
// dist/, so a build made there ships none; Node 20 writes it at the first run where dist/ can be written.
const help = spawnSync(process.execPath, [new URL('bin/repoadmin', root).pathname, '--help'], { stdio: ['ignore', 'ignore', 'inherit'] });
if (help.status !== 0) throw new Error('bin/repoadmin --help failed');
if (!nodeModule.enableCompileCache && !existsSync(new URL('dist/repoadmin.cjs.cache', root))) throw new Error('bin/repoadmin --help did not write dist/repoadmin.cjs.cache');

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
