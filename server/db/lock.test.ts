import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockDataDir } from './lock.js';

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'repoadmin-lock-'));

/** The pid of a process that has ended. */
async function deadPid(): Promise<number> {
  const child = fork('-e', ['0'], { execArgv: [] });
  const pid = child.pid!;
  await new Promise((resolve) => child.once('exit', resolve));
  return pid;
}

describe('lockDataDir', () => {
  it('refuses a folder locked by a live process, naming it', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'repoadmin.lock'), `${process.ppid}\n`);
    expect(() => lockDataDir(dir)).toThrow(new RegExp(`in use by another server \\(pid ${process.ppid}\\)`));
  });

  it('takes over the lock of a dead process, and releases only its own', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'repoadmin.lock');
    fs.writeFileSync(file, `${await deadPid()}\n`);
    const release = lockDataDir(dir);
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(String(process.pid));
    expect(fs.existsSync(`${file}.takeover`)).toBe(false);
    release();
    expect(fs.existsSync(file)).toBe(false);
  });

  it('takes over a lock whose pid now names a process that started after the lock was written', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'repoadmin.lock');
    // A live process that is not a server, under the pid of a server that died an hour ago.
    const other = fork('-e', ['setTimeout(() => {}, 30000)'], { execArgv: [] });
    try {
      await new Promise((resolve) => other.once('spawn', resolve));
      fs.writeFileSync(file, `${other.pid}\n`);
      const anHourAgo = new Date(Date.now() - 3600_000);
      fs.utimesSync(file, anHourAgo, anHourAgo);
      const release = lockDataDir(dir);
      expect(fs.readFileSync(file, 'utf8').trim()).toBe(String(process.pid));
      release();
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('lets exactly one of several servers starting at once take over a stale lock', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'repoadmin.lock'), `${await deadPid()}\n`);
    const lockModule = new URL('./lock.ts', import.meta.url).pathname;
    const script = `import('${lockModule}').then((m) => { try { m.lockDataDir(${JSON.stringify(dir)}); process.send('locked'); } catch (e) { process.send('refused'); } setTimeout(() => process.exit(0), 1500); })`;
    const children = Array.from({ length: 6 }, () => fork('-e', [script], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] }));
    const answers = await Promise.all(children.map((c) => new Promise<string>((resolve) => c.once('message', (m) => resolve(String(m))))));
    await Promise.all(children.map((c) => new Promise((resolve) => c.once('exit', resolve))));
    expect(answers.filter((a) => a === 'locked')).toHaveLength(1);
    expect(answers.filter((a) => a === 'refused')).toHaveLength(5);
  });
});
