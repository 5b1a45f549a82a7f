// Runs the built bin/repoadmin as a real process, in an environment with no stored state
// unless a test gives one: an empty HOME and its own config folder.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin/repoadmin');

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function assertBuilt(): void {
  if (!existsSync(join(ROOT, 'dist/repoadmin.js'))) throw new Error('dist/ is missing: run npm run build (npm test does)');
}

/** A fresh HOME with nothing in it, like a new container. */
export async function freshHome(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'repoadmin-home-'));
}

/** Runs the CLI asynchronously (the test server lives in this process and must keep answering). */
export function run(args: string[], options: { env?: Record<string, string>; stdin?: string; home: string }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: options.home, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}
