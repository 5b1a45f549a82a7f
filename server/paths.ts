// Where the package's own files are, from source, from the bundle and once installed.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = path.join(dir, 'package.json');
    if (fs.existsSync(pkg) && (JSON.parse(fs.readFileSync(pkg, 'utf8')) as { name?: string }).name === 'repoadmin') return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the repoadmin package folder');
    dir = parent;
  }
}

export const PACKAGE_ROOT = findRoot();
/** The built package page (npm run build). */
export const PUBLIC_DIR = path.join(PACKAGE_ROOT, 'dist', 'public');
