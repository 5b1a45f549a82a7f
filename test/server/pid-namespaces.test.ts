// Two servers in two pid namespaces (as two containers sharing a volume) on one embedded folder: the
// second refuses to start, naming the first; after a kill -9 of the first a restart opens it at once.
// Each server runs under `unshare --pid --fork`, where it is pid 1, as in a container.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { BIN, cleanEnv, embeddedDataDir } from '../helpers/process.js';
import { namespaceSkip } from '../helpers/skip.js';

const probe = process.platform === 'linux' ? spawnSync('unshare', ['--pid', '--fork', 'true'], { encoding: 'utf8' }) : undefined;
const unavailable = probe?.status === 0 ? undefined : `cannot make a pid namespace (unshare --pid needs root): ${probe?.stderr.trim() ?? process.platform}`;

interface Contained {
  child: ChildProcess;
  exited: Promise<number | null>;
  stderr(): string;
  listening: Promise<boolean>;
}

function serverInNamespace(dataDir: string): Contained {
  const env = cleanEnv({ REPO_MAN_DATA_DIR: dataDir, REPO_MAN_ADMIN_PASSWORD: 'namespace-admin-pw', REPO_MAN_BCRYPT_COST: '4' });
  const child = spawn('unshare', ['--pid', '--fork', '--kill-child', '--', process.execPath, BIN, 'server', '--port', '0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = new Promise<boolean>((resolve) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('listening on')) resolve(true);
    });
    void exited.then(() => resolve(false));
  });
  return { child, exited, stderr: () => stderr, listening };
}

/** The pid, in this namespace, of the server that `unshare` started (its only child). */
function serverPid(unshare: ChildProcess): number {
  const children = fs.readFileSync(`/proc/${unshare.pid}/task/${unshare.pid}/children`, 'utf8').trim();
  return Number(children.split(' ')[0]);
}

describe.skipIf(namespaceSkip('servers in two pid namespaces', unavailable))('one embedded folder, two pid namespaces', () => {
  it('refuses the second server with a clear message, and after a kill -9 of the first a restart opens it at once', async () => {
    const dataDir = embeddedDataDir();
    const first = serverInNamespace(dataDir);
    try {
      expect(await first.listening, first.stderr()).toBe(true);

      const second = serverInNamespace(dataDir);
      expect(await second.exited).toBe(1);
      // Both are pid 1 in their own namespace: a pid alone could not tell them apart.
      expect(second.stderr()).toContain(
        `the embedded database at ${dataDir} is in use by another server (pid 1) on ${os.hostname()}; stop it first or choose another --repoadmin_data_dir / REPO_MAN_DATA_DIR`,
      );

      process.kill(serverPid(first.child), 'SIGKILL');
      await first.exited;
      const started = Date.now();
      const restarted = serverInNamespace(dataDir);
      try {
        expect(await restarted.listening, restarted.stderr()).toBe(true);
        expect(restarted.stderr()).not.toContain('in use');
      } finally {
        process.kill(serverPid(restarted.child), 'SIGTERM');
        expect(await restarted.exited).toBe(0);
      }
      console.log(`restart after kill -9 listening in ${Date.now() - started} ms`);
    } finally {
      if (first.child.exitCode === null) first.child.kill('SIGKILL');
    }
  });
});
