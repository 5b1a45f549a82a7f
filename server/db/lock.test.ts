import { type ChildProcess, fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockDataDir } from './lock.js';

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'repoadmin-lock-'));
const lockModule = new URL('./lock.ts', import.meta.url).pathname;

/** A process that takes the folder's lock, says 'locked' or 'refused', then stays until `holdMs` passes or it is killed. */
function locker(dir: string, holdMs = 60_000): { child: ChildProcess; answer: Promise<string>; exited: Promise<unknown> } {
  const script = `import('${lockModule}').then((m) => { try { m.lockDataDir(${JSON.stringify(dir)}); process.send('locked'); } catch (e) { process.send('refused: ' + e.message); } setTimeout(() => process.exit(0), ${holdMs}); })`;
  const child = fork('-e', [script], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return {
    child,
    answer: new Promise<string>((resolve) => child.once('message', (m) => resolve(String(m)))),
    exited: new Promise((resolve) => child.once('exit', resolve)),
  };
}

describe('lockDataDir', () => {
  it('refuses a folder another live process holds, naming its pid and host', async () => {
    const dir = tempDir();
    const holder = locker(dir);
    try {
      expect(await holder.answer).toBe('locked');
      expect(() => lockDataDir(dir)).toThrow(`in use by another server (pid ${holder.child.pid}) on ${os.hostname()};`);
    } finally {
      holder.child.kill('SIGKILL');
    }
  });

  it('opens at once a folder whose holder was killed (kill -9), whatever its lock file still says', async () => {
    const dir = tempDir();
    const holder = locker(dir);
    expect(await holder.answer).toBe('locked');
    holder.child.kill('SIGKILL');
    await holder.exited;
    expect(fs.readFileSync(path.join(dir, 'repoadmin.lock'), 'utf8')).toBe(`${holder.child.pid} ${os.hostname()}\n`);
    const release = lockDataDir(dir);
    expect(fs.readFileSync(path.join(dir, 'repoadmin.lock'), 'utf8')).toBe(`${process.pid} ${os.hostname()}\n`);
    release();
    // Released: another process takes it.
    const next = locker(dir, 0);
    expect(await next.answer).toBe('locked');
    await next.exited;
  });

  it('is not taken twice by one process', () => {
    const dir = tempDir();
    const release = lockDataDir(dir);
    try {
      expect(() => lockDataDir(dir)).toThrow('in use by another server');
    } finally {
      release();
    }
    lockDataDir(dir)();
  });

  it('lets exactly one of several servers starting at once take it', async () => {
    const dir = tempDir();
    // Held long enough that every other one has asked while it holds, however slowly they start.
    const lockers = Array.from({ length: 6 }, () => locker(dir, 15_000));
    const answers = await Promise.all(lockers.map((l) => l.answer));
    await Promise.all(lockers.map((l) => l.exited));
    expect(answers.filter((a) => a === 'locked')).toHaveLength(1);
    expect(answers.filter((a) => a.startsWith('refused: ') && a.includes('in use by another server'))).toHaveLength(5);
  });
});
