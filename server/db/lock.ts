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

/** Takes the folder's lock, or throws naming the process that holds it. Returns the release function. */
export function lockDataDir(dir: string): () => void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
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
      const holder = Number.parseInt(fs.readFileSync(file, 'utf8'), 10);
      if (Number.isInteger(holder) && holder !== process.pid && alive(holder)) {
        throw new AppError(
          'conflict',
          `the embedded database at ${dir} is in use by another server (pid ${holder}); stop it first or choose another --repoadmin_data_dir / REPO_MAN_DATA_DIR`,
        );
      }
      // A lock left by a server that was killed: its process is gone, so the folder is free.
      fs.rmSync(file, { force: true });
    }
  }
  throw new AppError('conflict', `cannot lock the embedded database at ${dir}`);
}
