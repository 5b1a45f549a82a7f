// Keeps a second server off an embedded database folder: two processes on one PGlite folder lose data.
import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../../common/errors.js';

const LOCK_FILE = 'repoadmin.lock';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When a process started, in ms since the epoch, from Linux's /proc (field 22 of /proc/PID/stat,
 * in clock ticks since boot, USER_HZ = 100 on every Linux architecture; boot time from /proc/stat).
 * Undefined where there is no /proc.
 */
function startedAt(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const boot = Number(/^btime (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'))?.[1]);
    return Number.isFinite(ticks) && Number.isFinite(boot) ? boot * 1000 + ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the live process `pid` is the one that wrote the lock: a process that started after the
 * lock was written cannot be (the pid was reused after a crash or a reboot, as in a container whose
 * server is always pid 7). Boot time has whole seconds, hence the margin.
 */
function wroteLock(pid: number, file: string): boolean {
  const started = startedAt(pid);
  const written = fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs;
  return started === undefined || written === undefined || started <= written + 1_000;
}

function ageOf(file: string): number {
  return Date.now() - (fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0);
}

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function readHolder(file: string): number {
  try {
    return Number.parseInt(fs.readFileSync(file, 'utf8'), 10);
  } catch {
    return Number.NaN;
  }
}

/**
 * Removes a dead server's lock. Two servers starting at once may both find it stale: the takeover
 * file lets one of them remove it, and only while it still names the dead process, so neither can
 * remove the lock the other has just taken.
 */
function removeStaleLock(file: string, stalePid: number): void {
  const takeover = `${file}.takeover`;
  try {
    fs.writeFileSync(takeover, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another server is taking over; a takeover file older than a few seconds was left by a crash.
    if (ageOf(takeover) > 5_000) fs.rmSync(takeover, { force: true });
    else pause(100);
    return;
  }
  try {
    const now = readHolder(file);
    if (now === stalePid) fs.rmSync(file, { force: true });
  } finally {
    fs.rmSync(takeover, { force: true });
  }
}

/** Takes the folder's lock, or throws naming the process that holds it. Returns the release function. */
export function lockDataDir(dir: string): () => void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.unlinkSync(file);
        } catch {
          // Already gone: nothing to release.
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readHolder(file);
      if (Number.isNaN(holder) && ageOf(file) < 2_000) {
        // Just created by another server that has not written its pid yet.
        pause(100);
        continue;
      }
      if (Number.isInteger(holder) && holder !== process.pid && alive(holder) && wroteLock(holder, file)) {
        throw new AppError(
          'conflict',
          `the embedded database at ${dir} is in use by another server (pid ${holder}); stop it first or choose another --repoadmin_data_dir / REPO_MAN_DATA_DIR`,
        );
      }
      // A lock left by a server that was killed: its process is gone (or its pid now names another
      // process), so the folder is free.
      removeStaleLock(file, holder);
    }
  }
  throw new AppError('conflict', `cannot lock the embedded database at ${dir}`);
}
