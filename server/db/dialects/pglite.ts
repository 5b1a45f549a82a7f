// Embedded PGlite: opening its data folder (made private, locked against a second server, created
// in a child process) and running statements through knex. Its SQL, error codes and publish
// statement are PostgreSQL's (postgres.ts).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import knexFactory, { type Knex } from 'knex';
import { AppError } from '../../../common/errors.js';
import type { ServerConfig } from '../../config.js';
import { QUIET } from '../driver.js';
import { lockDataDir } from '../lock.js';
import { useDialect } from './index.js';
import { postgresLike } from './postgres.js';

const require = createRequire(import.meta.url);

/** A data folder that is no folder: the embedded database lives in memory (tests, trials). */
export const MEMORY = 'memory://';

/** PGlite runs one statement at a time on its one connection: through knex.raw, unnamed. */
export const pgliteDialect = postgresLike(async (db, statement, values) => {
  const result = (await db.raw(statement.sql, values as Knex.RawBinding[])) as { rows: Record<string, unknown>[] };
  return result.rows;
});

/**
 * Makes the embedded database's folder readable by this user only: it holds the JWT secret and the
 * password hashes (in its tables and its WAL). The folder is made 0700; whatever is in it loses its
 * group and other bits; and the files PGlite creates from now on are made without them, whatever
 * the umask (PGlite creates its files 0666 and leaves the rest to the umask). Returns a warning when
 * an existing folder was open.
 */
export function protectDataDir(dir: string): string[] {
  if (isMainThread) process.umask(process.umask(0o077) | 0o077);
  const folder = fs.statSync(dir, { throwIfNoEntry: false });
  if (!folder) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return [];
  }
  let open = false;
  const tighten = (file: string, mode: number) => {
    if ((mode & 0o077) === 0) return;
    open = true;
    fs.chmodSync(file, mode & 0o700);
  };
  tighten(dir, folder.mode & 0o777);
  for (const entry of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const file = path.join(dir, entry);
    const stat = fs.lstatSync(file);
    if (!stat.isSymbolicLink()) tighten(file, stat.mode & 0o777);
  }
  if (!open) return [];
  return [
    `the embedded database folder ${dir} was open to other users (mode ${(folder.mode & 0o777).toString(8)}): made it readable by this user only`,
  ];
}

/**
 * The embedded database's settings, on top of PGlite's own start parameters (single-user mode; they
 * also hold `-F`, no fsync, PGlite's own default, which these settings leave as it is).
 * shared_buffers is PostgreSQL's page cache inside the WebAssembly heap, which PostgreSQL touches
 * whole at start and which never shrinks: 8 MB instead of 128 MB keeps the server under 200 MB of
 * memory (16 MB measured 8 MB more RSS, with searches and publishes at 100,000 records no faster);
 * the operating system's file cache still holds the data files. Not set, as lowering them measured
 * no difference: work_mem, maintenance_work_mem, temp_buffers and wal_buffers. PGlite's
 * initialMemory (128 MB) is left as it is: only the pages touched are resident (about 30 MB of it
 * at 16 MB shared_buffers). Autovacuum and parallel workers do not run in single-user mode, and
 * this PostgreSQL has no JIT. Documented in docs/benchmarks.md ("The embedded database's memory") and docs/api.md
 * ("Configuration"); bench/pglite-memory.ts measures it.
 */
export const PGLITE_SETTINGS = ['-c', 'shared_buffers=8MB'];

interface PGliteModule {
  PGlite: { new (dataDir: string, options: { startParams: string[] }): unknown; defaultStartParams: string[] };
}

/** Where a first start creates the embedded database before moving it into the data folder. */
const STAGING = '.repoadmin-initdb';

/**
 * Creates a new embedded database (initdb) in a child process. In the server's own process initdb
 * would grow the WebAssembly heap to about 800 MB, which it never gives back; the child's memory
 * goes away with it. Nothing to do when the folder already holds a database.
 *
 * The database is made in a folder inside the data folder (which may be a volume's mount point, so
 * it cannot itself be renamed), renamed to "done" when initdb has finished, then moved into place
 * with PG_VERSION, the mark of a database, last: a first start interrupted anywhere leaves either
 * nothing half made (the next start begins again) or a finished database still to move (the next
 * start finishes the move).
 */
async function initdbInChild(dir: string): Promise<void> {
  const staging = path.join(dir, STAGING);
  if (fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    fs.rmSync(staging, { recursive: true, force: true });
    return;
  }
  const done = path.join(staging, 'done');
  if (!fs.existsSync(done)) {
    fs.rmSync(staging, { recursive: true, force: true });
    fs.mkdirSync(staging, { mode: 0o700 });
    const made = path.join(staging, 'new');
    await runInitdb(made);
    fs.renameSync(made, done);
  }
  const entries = fs.readdirSync(done).filter((entry) => entry !== 'PG_VERSION');
  for (const entry of [...entries, 'PG_VERSION']) {
    if (fs.existsSync(path.join(dir, entry))) {
      throw new AppError('usage', `the embedded database folder ${dir} holds "${entry}", which is not an embedded database's: choose an empty folder with --repoadmin_data_dir / REPO_MAN_DATA_DIR`);
    }
    fs.renameSync(path.join(done, entry), path.join(dir, entry));
  }
  fs.rmSync(staging, { recursive: true, force: true });
}

async function runInitdb(dir: string): Promise<void> {
  const entry = require.resolve('@electric-sql/pglite');
  const code =
    `require(${JSON.stringify(entry)}).PGlite.create(process.argv[1]).then((db) => db.close())` +
    '.catch((error) => { process.stderr.write(String(error && error.message)); process.exit(1); })';
  await new Promise<void>((resolve, reject) => {
    // A server stopped while the child works (a stop signal during the start) takes it along.
    const stop = () => child.kill();
    const child = execFile(process.execPath, ['-e', code, dir], { maxBuffer: 1024 * 1024 }, (error, _stdout, stderr) => {
      process.off('exit', stop);
      if (error) reject(new AppError('internal', `cannot create the embedded database in ${dir}: ${stderr.trim() || error.message}`));
      else resolve();
    });
    process.once('exit', stop);
  });
}

const FOLDER_PROBLEMS: Record<string, string> = {
  ENOTDIR: 'is a file (or a path through a file), not a folder',
  EEXIST: 'is a file, not a folder',
  EACCES: 'cannot be written by this user',
  EPERM: 'belongs to another user (it must belong to the user the server runs as)',
  EROFS: 'is on a read-only file system',
  ENOSPC: 'is on a full disk',
  EDQUOT: 'is on a disk whose quota is used up',
};

/** A file system error on the data folder as a message naming the folder, the user and the setting. */
function folderProblem(error: unknown, dir: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const problem = code && FOLDER_PROBLEMS[code];
  if (!problem) return error;
  const user = process.getuid ? `; this server runs as uid ${process.getuid()}` : '';
  return new AppError(
    'usage',
    `the embedded database folder ${dir} ${problem}${user}: fix it or choose another with --repoadmin_data_dir / REPO_MAN_DATA_DIR`,
    { cause: error },
  );
}

/** Opens (creating it when new) the embedded database; `close` also lets go of the folder's lock. */
export async function openPglite(config: ServerConfig['db']): Promise<{ db: Knex; description: string; warnings: string[]; close(): Promise<void> }> {
  const inMemory = config.dataDir === MEMORY;
  let warnings: string[] = [];
  let release = () => {};
  try {
    if (!inMemory) {
      warnings = protectDataDir(config.dataDir);
      release = lockDataDir(config.dataDir);
    }
  } catch (error) {
    throw folderProblem(error, config.dataDir);
  }
  try {
    const ClientPgLite = require('knex-pglite') as typeof Knex.Client;
    let connection = {};
    if (!inMemory) {
      await initdbInChild(config.dataDir);
      // The same PGlite module knex-pglite loads; closed by knex.destroy().
      const { PGlite } = require('@electric-sql/pglite') as PGliteModule;
      connection = { pglite: new PGlite(config.dataDir, { startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS] }) };
    }
    const db = knexFactory({
      client: ClientPgLite,
      dialect: 'postgres',
      connection,
      compileSqlOnError: false,
      log: QUIET,
    } as Knex.Config);
    await db.raw('select 1');
    useDialect(db, pgliteDialect);
    // PGlite sets the modes of the files of a new database itself (0666): take them back.
    if (!inMemory) protectDataDir(config.dataDir);
    return {
      db,
      description: inMemory ? 'embedded PGlite in memory' : `embedded PGlite at ${config.dataDir}`,
      warnings,
      close: async () => {
        try {
          await db.destroy();
        } finally {
          release();
        }
      },
    };
  } catch (error) {
    release();
    throw folderProblem(error, config.dataDir);
  }
}
