// bin/repoadmin runs the bundle through a V8 code cache (dist/repoadmin.cjs.cache): a copy of the
// built launcher and bundle, whose cache each test spoils in its own way. Whatever state the cache
// is in, the command answers the same; a bad cache is replaced, a good one left as it is.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv } from '../helpers/process.js';
import { assertBuilt, BIN, ROOT } from './run.js';

// Under node_modules/.cache, as bench/cli.ts does: the server's packages resolve from the copy.
const COPIES = join(ROOT, 'node_modules/.cache/repoadmin-launcher-test');
const copies: string[] = [];

function copyOfBuild(): { bin: string; cache: string; dist: string } {
  mkdirSync(COPIES, { recursive: true });
  const dir = mkdtempSync(join(COPIES, 'copy-'));
  copies.push(dir);
  cpSync(join(ROOT, 'dist/repoadmin.cjs'), join(dir, 'dist/repoadmin.cjs'));
  cpSync(join(ROOT, 'dist/repoadmin.cjs.cache'), join(dir, 'dist/repoadmin.cjs.cache'));
  cpSync(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  return { bin: join(dir, 'bin/repoadmin'), cache: join(dir, 'dist/repoadmin.cjs.cache'), dist: join(dir, 'dist') };
}

function repoadmin(bin: string, args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], { env: cleanEnv({ HOME: '/nonexistent' }), encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
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
  for (const dir of copies.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// The folder of the copies too, once empty: a checkout is left as the tests found it.
afterAll(() => {
  if (existsSync(COPIES) && readdirSync(COPIES).length === 0) rmdirSync(COPIES);
});

describe('the code cache of bin/repoadmin', () => {
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
