// Runs the built bin/repoadmin as a real process, in an environment with no stored state
// unless a test gives one: an empty HOME and its own config folder.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, type RunResult, run as runBinary, tempDir } from '../helpers/process.js';

export { BIN, ROOT, type RunResult } from '../helpers/process.js';

export function assertBuilt(): void {
  if (!existsSync(join(ROOT, 'dist/repoadmin.cjs'))) throw new Error('dist/ is missing: run npm run build (npm test does)');
}

/** A fresh HOME with nothing in it, like a new container. */
export async function freshHome(): Promise<string> {
  return tempDir('repoadmin-home-');
}

/** Runs the CLI asynchronously (the test server lives in this process and must keep answering). */
export function run(args: string[], options: { env?: Record<string, string>; stdin?: string; home: string; cwd?: string }): Promise<RunResult> {
  return runBinary(args, { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: options.home, ...options.env }, options.stdin, undefined, options.cwd);
}
