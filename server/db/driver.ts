// What opening a database server needs whatever its kind: the driver module the user supplies,
// and knex's own messages kept off the console.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { AppError } from '../../common/errors.js';

const require = createRequire(import.meta.url);

/**
 * knex's own messages ("Acquire connection error" with a stack, "Connection Error") go to the
 * console once per failed connection: during an outage that is a stack trace per request. The
 * failure reaches the request that met it, and the outage is logged once (server/db/outage.ts).
 */
export const QUIET = { warn() {}, error() {}, debug() {}, deprecate() {} };

/**
 * Loads a driver module: from the driver folder first, then from the working directory, then from
 * the server's own modules (only `pg` is bundled).
 */
export function loadDriver(name: string, driverPath: string | undefined): unknown {
  const folders: string[] = [];
  if (driverPath) {
    const folder = path.resolve(driverPath);
    if (!fs.existsSync(folder)) {
      throw new AppError('usage', `the driver folder ${folder} does not exist (--repoadmin_db_driver_path / REPO_MAN_DB_DRIVER_PATH)`);
    }
    const direct = path.join(folder, name);
    if (fs.existsSync(direct)) return require(direct);
    folders.push(folder);
  }
  folders.push(process.cwd());
  for (const folder of folders) {
    try {
      return require(require.resolve(name, { paths: [folder] }));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    }
  }
  try {
    return require(name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    throw new AppError(
      'usage',
      `the database driver "${name}" is not installed (--repoadmin_db_driver / REPO_MAN_DB_DRIVER): run "npm install ${name}" in a folder and give that folder as --repoadmin_db_driver_path / REPO_MAN_DB_DRIVER_PATH`,
    );
  }
}
