// Keeps a second server off an embedded database folder: two processes on one PGlite folder lose data.
// The lock is the operating system's (flock(2) on a file in the folder), so it holds across pid
// namespaces (containers sharing a volume) and ends with the process that holds it, however it ends.
// Where there is no `flock` command (not Linux), a pid file does the same within one machine.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '../../common/errors.js';

const LOCK_FILE = 'repoadmin.lock';

/** `holder`: "pid N", or how else it is known; `host`: where that pid is, when known. */
function inUse(dir: string, holder: string, host?: string): AppError {
  return new AppError(
    'conflict',
    `the embedded database at ${dir} is in use by another server (${holder})${host ? ` on ${host}` : ''}; stop it first or choose another --repoadmin_data_dir / REPO_MAN_DATA_DIR`,
  );
}

/**
 * Takes an exclusive flock(2) on the open file `fd` without waiting: the `flock` command locks the
 * descriptor it inherits, which shares its open file with this process's, so the lock stays when the
 * command ends and goes when this process closes the file or ends. Undefined without that command.
 */
function flock(fd: number): boolean | undefined {
  const result = spawnSync('flock', ['--exclusive', '--nonblock', '3'], { stdio: ['ignore', 'ignore', 'pipe', fd] });
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return undefined;
  if (result.status === 0) return true;
  if (result.status === 1) return false;
  throw new Error(`flock: ${result.stderr?.toString().trim() || result.error?.message || `exit ${result.status}`}`);
}

/** Takes the folder's lock, or throws naming the server that holds it. Returns the release function. */
export function lockDataDir(dir: string): () => void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, LOCK_FILE);
  const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
  let taken: boolean | undefined;
  try {
    taken = flock(fd);
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
  if (taken === undefined) {
    fs.closeSync(fd);
    return lockWithPidFile(dir, file);
  }
  if (!taken) {
    // "PID HOST", written by the holder once it had the lock.
    const [pid, host] = fs.readFileSync(fd, 'utf8').trim().split(' ');
    fs.closeSync(fd);
    throw inUse(dir, pid ? `pid ${pid}` : 'a server that is still starting', host);
  }
  // For the message a second server shows: which server, where (a pid alone means little in a container).
  fs.ftruncateSync(fd, 0);
  fs.writeSync(fd, `${process.pid} ${os.hostname()}\n`, 0);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    // The file stays: removing it would let a server that opened it just before lock a file no other finds.
    fs.ftruncateSync(fd, 0);
    fs.closeSync(fd);
  };
}

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

/** The lock as a pid file, where there is no flock: good within one machine and pid namespace. */
function lockWithPidFile(dir: string, file: string): () => void {
  // The pid file is created anew each time: the empty file the flock lock opened goes first.
  if (fs.statSync(file).size === 0) fs.rmSync(file, { force: true });
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
        throw inUse(dir, `pid ${holder}`);
      }
      // A lock left by a server that was killed: its process is gone (or its pid now names another
      // process), so the folder is free.
      removeStaleLock(file, holder);
    }
  }
  throw new AppError('conflict', `cannot lock the embedded database at ${dir}`);
}
