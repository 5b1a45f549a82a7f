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
 * this PostgreSQL has no JIT. Documented in README ("Performance") and docs/api.md
 * ("Configuration"); bench/pglite-memory.ts measures it.
 */
export const PGLITE_SETTINGS = ['-c', 'shared_buffers=8MB'];

interface PGliteModule {
  PGlite: { new (dataDir: string, options: { startParams: string[] }): unknown; defaultStartParams: string[] };
}

/**
 * Creates a new embedded database (initdb) in a child process. In the server's own process initdb
 * would grow the WebAssembly heap to about 800 MB, which it never gives back; the child's memory
 * goes away with it. Nothing to do when the folder already holds a database.
 */
async function initdbInChild(dir: string): Promise<void> {
  if (fs.existsSync(path.join(dir, 'PG_VERSION'))) return;
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

/** Opens (creating it when new) the embedded database; `close` also lets go of the folder's lock. */
export async function openPglite(config: ServerConfig['db']): Promise<{ db: Knex; description: string; warnings: string[]; close(): Promise<void> }> {
  const inMemory = config.dataDir === MEMORY;
  const warnings = inMemory ? [] : protectDataDir(config.dataDir);
  const release = inMemory ? () => {} : lockDataDir(config.dataDir);
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
    throw error;
  }
}
