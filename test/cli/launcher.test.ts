// bin/repoadmin runs the bundle through a compile cache: on Node 22.1 and later Node's own
// (module.enableCompileCache, in the folder Node chooses), on Node 20 a V8 code cache of its own
// (dist/repoadmin.cjs.cache). Each test runs a copy of the built launcher and bundle, with the
// cache in some state; whatever the state, the command answers the same. On Node 20 a bad cache is
// replaced and a good one left as it is; on either, a read-only installation runs all the same.
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import nodeModule from 'node:module';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv } from '../helpers/process.js';
import { assertBuilt, BIN, ROOT } from './run.js';

/** Whether this Node has its own compile cache, which bin/repoadmin then uses instead of its own. */
const NODE_COMPILE_CACHE = 'enableCompileCache' in nodeModule;

// Under node_modules, so that the server's packages resolve from the copy; not under
// node_modules/.cache, which other tools may have made private (0700), where the read-only runs as
// another user could not reach the copy.
const COPIES = join(ROOT, 'node_modules/.repoadmin-launcher-test');
const copies: string[] = [];

function copyOfBuild(): { dir: string; bin: string; cache: string; dist: string; tmp: string } {
  mkdirSync(COPIES, { recursive: true });
  // Whatever the umask of this process (the embedded database's start tightens it to 077).
  chmodSync(COPIES, 0o755);
  const dir = mkdtempSync(join(COPIES, 'copy-'));
  copies.push(dir);
  cpSync(join(ROOT, 'dist/repoadmin.cjs'), join(dir, 'dist/repoadmin.cjs'));
  // A build made on Node 22 or later has none (scripts/build.mjs).
  if (existsSync(join(ROOT, 'dist/repoadmin.cjs.cache'))) cpSync(join(ROOT, 'dist/repoadmin.cjs.cache'), join(dir, 'dist/repoadmin.cjs.cache'));
  cpSync(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  // The temporary directory of the runs, where Node's compile cache goes unless NODE_COMPILE_CACHE says otherwise.
  mkdirSync(join(dir, 'tmp'));
  return { dir, bin: join(dir, 'bin/repoadmin'), cache: join(dir, 'dist/repoadmin.cjs.cache'), dist: join(dir, 'dist'), tmp: join(dir, 'tmp') };
}

/** Runs bin with TMPDIR=tmp and no compile cache setting of the caller's; as another user when asked. */
function repoadmin(bin: string, args: string[], options: { tmp?: string; env?: Record<string, string>; uid?: number } = {}) {
  const env = cleanEnv({ HOME: '/nonexistent', TMPDIR: options.tmp, NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: undefined, ...options.env });
  const result = spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8', ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }) });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Every file under dir, relative to it. */
function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

let expectedHelp: ReturnType<typeof repoadmin>;
let expectedUsage: ReturnType<typeof repoadmin>;

beforeAll(() => {
  assertBuilt();
  expectedHelp = repoadmin(BIN, ['search', '--help']);
  expectedUsage = repoadmin(BIN, ['search', '--field', 'nope']);
  expect(expectedHelp.code).toBe(0);
  expect(expectedHelp.stdout).toContain('--latest');
  expect(expectedUsage.code).toBe(2);
});

afterEach(() => {
  for (const dir of copies.splice(0)) {
    // Writable again, for a run that is not root.
    chmodSync(dir, 0o755);
    for (const entry of readdirSync(dir, { recursive: true })) chmodSync(join(dir, entry as string), 0o755);
    rmSync(dir, { recursive: true, force: true });
  }
});

// The folder of the copies too, once empty: a checkout is left as the tests found it.
afterAll(() => {
  if (existsSync(COPIES) && readdirSync(COPIES).length === 0) rmdirSync(COPIES);
});

describe.skipIf(NODE_COMPILE_CACHE)('the code cache of bin/repoadmin, on Node 20', () => {
  it('is built with the bundle and used as it is', () => {
    const { bin, cache } = copyOfBuild();
    const before = readFileSync(cache);
    expect(before.length).toBeGreaterThan(0);
    expect(repoadmin(bin, ['search', '--help'])).toEqual(expectedHelp);
    expect(readFileSync(cache).equals(before)).toBe(true);
  });

  it('is replaced when V8 rejects it, and the run is the same', () => {
    const { bin, cache, dist } = copyOfBuild();
    const spoilt = Buffer.from('not a V8 code cache'.repeat(100));
    writeFileSync(cache, spoilt);
    expect(repoadmin(bin, ['search', '--field', 'nope'])).toEqual(expectedUsage);
    const replaced = readFileSync(cache);
    expect(replaced.equals(spoilt)).toBe(false);
    expect(replaced.length).toBeGreaterThan(1000);
    // Accepted from then on: the next run leaves it alone.
    expect(repoadmin(bin, ['search', '--help'])).toEqual(expectedHelp);
    expect(readFileSync(cache).equals(replaced)).toBe(true);
    expect(readdirSync(dist).sort()).toEqual(['repoadmin.cjs', 'repoadmin.cjs.cache']);
  });

  it('is written when missing', () => {
    const { bin, cache } = copyOfBuild();
    rmSync(cache);
    expect(repoadmin(bin, ['search', '--help'])).toEqual(expectedHelp);
    expect(statSync(cache).size).toBeGreaterThan(1000);
  });

  it('cannot be written: the command runs all the same and leaves no file behind', () => {
    const { bin, cache, dist } = copyOfBuild();
    // A folder where the cache should be: it can be neither read nor replaced (a read-only
    // installation does the same to the writing, but cannot be had as root).
    rmSync(cache);
    mkdirSync(cache);
    expect(repoadmin(bin, ['search', '--help'])).toEqual(expectedHelp);
    expect(repoadmin(bin, ['search', '--field', 'nope'])).toEqual(expectedUsage);
    expect(statSync(cache).isDirectory()).toBe(true);
    expect(readdirSync(dist).sort()).toEqual(['repoadmin.cjs', 'repoadmin.cjs.cache']);
  });
});

describe.runIf(NODE_COMPILE_CACHE)("Node's compile cache, on Node 22.1 and later", () => {
  it('is written to the temporary directory, and nothing beside the installation', () => {
    const { bin, dist, tmp } = copyOfBuild();
    const before = filesUnder(dist);
    expect(repoadmin(bin, ['search', '--help'], { tmp })).toEqual(expectedHelp);
    const cache = filesUnder(tmp);
    expect(cache.length).toBeGreaterThan(0);
    expect(cache.every((file) => file.startsWith('node-compile-cache/'))).toBe(true);
    // Read back: the same answers, and the cache of the bundle not written again.
    const bundle = cache.map((file) => join(tmp, file)).sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
    const written = statSync(bundle).mtimeMs;
    expect(repoadmin(bin, ['search', '--field', 'nope'], { tmp })).toEqual(expectedUsage);
    expect(statSync(bundle).mtimeMs).toBe(written);
    expect(filesUnder(dist)).toEqual(before);
  });

  it('is left off with NODE_DISABLE_COMPILE_CACHE=1', () => {
    const { bin, tmp } = copyOfBuild();
    expect(repoadmin(bin, ['search', '--help'], { tmp, env: { NODE_DISABLE_COMPILE_CACHE: '1' } })).toEqual(expectedHelp);
    expect(filesUnder(tmp)).toEqual([]);
  });
});

// Really read-only: every file and folder of the copy without write permission and, for a root
// test run (which permission bits do not stop), the command run as nobody (uid 65534).
describe('a read-only installation', () => {
  const uid = process.getuid?.() === 0 ? 65534 : undefined;

  function readOnly(dir: string): void {
    for (const entry of readdirSync(dir, { recursive: true })) {
      const path = join(dir, entry as string);
      chmodSync(path, statSync(path).isDirectory() ? 0o555 : 0o444);
    }
    chmodSync(dir, 0o555);
  }

  it('runs without a cache it cannot write, and writes nothing', () => {
    const { dir, bin, cache, tmp } = copyOfBuild();
    // The worst case: no code cache in dist/ and a temporary directory that cannot be written either.
    rmSync(cache, { force: true });
    readOnly(dir);
    const before = filesUnder(dir);
    expect(repoadmin(bin, ['--version'], { tmp, uid })).toEqual({ code: 0, stdout: `${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}\n`, stderr: '' });
    expect(repoadmin(bin, ['search', '--help'], { tmp, uid })).toEqual(expectedHelp);
    expect(repoadmin(bin, ['search', '--field', 'nope'], { tmp, uid })).toEqual(expectedUsage);
    expect(filesUnder(dir)).toEqual(before);
  });

  it.runIf(NODE_COMPILE_CACHE)("still gets Node's compile cache in a temporary directory it can write", () => {
    const { dir, bin, dist, tmp } = copyOfBuild();
    readOnly(dir);
    const writable = mkdtempSync(join(COPIES, 'tmp-'));
    copies.push(writable);
    chmodSync(writable, 0o777);
    const before = filesUnder(dist);
    expect(repoadmin(bin, ['search', '--help'], { tmp: writable, uid })).toEqual(expectedHelp);
    expect(filesUnder(writable).some((file) => file.startsWith('node-compile-cache/'))).toBe(true);
    expect(filesUnder(dist)).toEqual(before);
    expect(filesUnder(tmp)).toEqual([]);
  });
});
