// The built `bin/repoadmin` as a real process: a server to talk to, or a command to run.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { copyPgliteTemplate } from './db.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin', 'repoadmin');

/**
 * The temporary folders this test process made, removed when it exits. A worker that the test
 * runner ends with a signal keeps its folders (about half of them in a run of the suite).
 */
const made: string[] = [];
process.once('exit', () => {
  for (const dir of made) {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // A folder some other process still holds is left to the system's own clean-up.
    }
  }
});

/**
 * A port nothing on 127.0.0.1 listens on now, for a process that must be told its port before it
 * starts. A fixed number would be shared by two runs of the suite at once (HAProxy binds with
 * SO_REUSEPORT, so its connections went half to the other run's servers); the kernel could hand
 * this one out again before it is bound, which it does not do at once.
 */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A new temporary folder, removed when the test process exits. */
export function tempDir(prefix = 'repoadmin-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/**
 * A data folder for a server process whose test is not about creating the embedded database: a copy
 * of the run's migrated one (test/helpers/pglite-template.ts), which a server opens in well under a
 * second of CPU where creating it takes about five. Removed when the test process exits.
 */
export function embeddedDataDir(): string {
  return copyPgliteTemplate(tempDir());
}

/** A clean environment: no REPO_MAN_* or REPOADMIN_* leaking in from the caller's. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('REPO_MAN_') && !k.startsWith('REPOADMIN_') && k !== 'PORT' && k !== 'CI') env[k] = v;
  }
  return { ...env, NO_COLOR: '1', ...extra };
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Sends the signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

/** Starts `repoadmin server --port 0 ...` and waits for its "listening on" line. */
export async function startServerProcess(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<ServerProcess> {
  const child = spawn(process.execPath, [BIN, 'server', '--port', '0', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stdout!.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running after the test: it would go on holding its port and folder.
      child.kill('SIGKILL');
      reject(new Error(`server did not start in time:\n${stderr}`));
    }, timeoutMs);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const m = /listening on (http:\/\/[^\s,]+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!.replace('localhost', '127.0.0.1'));
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${stderr}`));
    });
  });
  return {
    url,
    child,
    exited,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to completion (in `cwd`, else this process's folder). */
export function run(args: string[], env: NodeJS.ProcessEnv, input?: string, timeoutMs = 60_000, cwd?: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`repoadmin ${args.join(' ')} did not finish:\n${stderr}`));
    }, timeoutMs);
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    // 'close', not 'exit': only then has all of the output been read.
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    // A command that needs no input may end before reading it: the write then fails with EPIPE,
    // which says nothing about the command.
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    });
    child.stdin.end(input ?? '');
  });
}
