// Opens the configured database: embedded PGlite (default), a PostgreSQL server through `pg`, or
// MariaDB/MySQL through the `mysql2` driver the user supplies.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import knexFactory, { type Knex } from 'knex';
import { AppError } from '../../common/errors.js';
import type { ServerConfig } from '../config.js';
import { describeMysqlConnectionError, mysqlKnex, serverName } from './dialects/mysql.js';
import { boundStatement } from './client-timeout.js';
import { connectFailure, firstLine, networkReason } from './connect-failure.js';
import { withDatabaseLock } from './database-lock.js';
import { lockDataDir } from './lock.js';
import { MIGRATION_CONFIG } from './migrations/index.js';

const require = createRequire(import.meta.url);

export interface Database {
  db: Knex;
  /** For the start-up line: "embedded PGlite at /path" or "PostgreSQL repoadmin on host:5432". */
  description: string;
  /** What the operator should know, for the start-up messages (a data folder that was open). */
  warnings: string[];
  close(): Promise<void>;
}

export const MEMORY = 'memory://';

/** How much longer than the server's statement_timeout the client waits for an answer. */
const CLIENT_MARGIN_MS = 1_000;

/**
 * knex's own messages ("Acquire connection error" with a stack, "Connection Error") go to the
 * console once per failed connection: during an outage that is a stack trace per request. The
 * failure reaches the request that met it, and the outage is logged once (server/db/outage.ts).
 */
const QUIET = { warn() {}, error() {}, debug() {}, deprecate() {} };

/**
 * Loads a driver module: from the driver folder first, then from the working directory, then from
 * the server's own modules (only `pg` is bundled).
 */
function loadDriver(name: string, driverPath: string | undefined): unknown {
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

/** The parts of a node-postgres client that the client-side timeout reaches into. */
interface PgConnection {
  __knex__disposed?: unknown;
  connection?: { stream?: { destroy(error?: Error): void } };
  query(config: Record<string, unknown>, callback: (error: Error | null, response: unknown) => void): void;
}

/** What knex hands its client's `_query`: the SQL, its values, driver options (a statement's name). */
interface KnexQuery {
  sql: string;
  bindings?: unknown[];
  options?: Record<string, unknown>;
  response?: unknown;
}

/**
 * knex's PostgreSQL client with our driver module, and a client-side bound on every statement: a
 * database that stops answering (packets dropped, no reset) would otherwise hold the request until
 * TCP gives up, many minutes later. The server's own statement_timeout fires first when it can
 * answer; when the answer has not come `limitMs` after that, the connection is destroyed (its
 * socket is in an unknown state) and marked so the pool does not hand it out again.
 */
function postgresClient(driver: unknown, limitMs: number): typeof Knex.Client {
  const ClientPG = require('knex/lib/dialects/postgres/index.js') as typeof Knex.Client;
  return class ClientWithDriver extends ClientPG {
    /**
     * Read by the dialect: statements may be named and prepared (dialects/postgres.ts). On the
     * prototype, so a transaction's client (made from it) has it too.
     */
    get namedStatements(): boolean {
      return true;
    }

    _driver() {
      return driver;
    }

    /**
     * knex's own, without its lodash merge of the options into the query config, which cost a
     * read more CPU than the rest of the call (bench/results, 2026-11-23 profiles).
     */
    _query(connection: PgConnection, obj: KnexQuery): Promise<unknown> {
      if (!obj.sql) throw new Error('The query is empty');
      const config = { text: obj.sql, values: obj.bindings ?? [], ...obj.options };
      const running = new Promise<KnexQuery>((resolve, reject) => {
        connection.query(config, (error, response) => {
          if (error) return reject(error);
          obj.response = response;
          resolve(obj);
        });
      });
      return boundStatement(running, connection, limitMs, () => connection.connection?.stream?.destroy());
    }
  } as unknown as typeof Knex.Client;
}

function describeConnectionError(error: unknown, config: ServerConfig['db']): string {
  const code = (error as { code?: string }).code;
  const badDatabase = code === '3D000';
  const denied = code === '28P01' || code === '28000';
  const reason =
    networkReason(code) ?? (badDatabase ? 'the database does not exist' : denied ? 'authentication failed' : firstLine(error));
  return connectFailure('PostgreSQL', config, reason, badDatabase ? 'database' : denied ? 'login' : 'address');
}

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

export async function openDatabase(config: ServerConfig['db']): Promise<Database> {
  if (config.kind === 'pglite') {
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

  if (config.kind === 'mysql') return openMysql(config);

  const db = knexFactory({
    client: postgresClient(loadDriver(config.driver, config.driverPath), config.statementTimeoutMs + CLIENT_MARGIN_MS),
    connection: {
      host: config.host,
      port: config.port,
      user: config.user,
      password: config.password,
      database: config.database,
      // Connecting (TCP, TLS, start-up, authentication) until the server is ready for a query.
      connectionTimeoutMillis: config.connectTimeoutMs,
      // On the server: a statement running longer is cancelled (57014).
      statement_timeout: config.statementTimeoutMs,
      keepAlive: true,
    },
    // Waiting for a pool connection, which includes opening one: a request never waits longer.
    acquireConnectionTimeout: config.connectTimeoutMs,
    // Errors name the statement without its values (which may be password hashes or tokens).
    compileSqlOnError: false,
    log: QUIET,
    pool: { min: 0, max: 10 },
  } as Knex.Config);
  try {
    await db.raw('select 1');
  } catch (error) {
    await db.destroy();
    throw new AppError('unavailable', describeConnectionError(error, config), { cause: error });
  }
  return {
    db,
    description: `PostgreSQL database ${config.database} on ${config.host}:${config.port}`,
    warnings: [],
    close: () => db.destroy(),
  };
}

async function openMysql(config: ServerConfig['db']): Promise<Database> {
  const db = mysqlKnex(config, loadDriver(config.driver, config.driverPath), QUIET);
  let name: string;
  try {
    name = await serverName(db);
  } catch (error) {
    await db.destroy();
    throw new AppError('unavailable', describeMysqlConnectionError(error, config), { cause: error });
  }
  return {
    db,
    description: `${name} database ${config.database} on ${config.host}:${config.port}`,
    warnings: [],
    close: () => db.destroy(),
  };
}

/**
 * Brings the schema up to date, under the database-wide `schema` lock, so that any number of
 * instances may start at once: one migrates, the others wait and then find nothing to do. knex's
 * own lock row is freed first: a start killed while migrating leaves it set, and no one else is
 * migrating while this instance holds the database's lock. The embedded database (a pool of one
 * connection) is one process's: no lock, and none could be held beside the migration's connection.
 */
export async function migrateLatest(db: Knex): Promise<void> {
  const migrate = async () => {
    await db.migrate.forceFreeMigrationsLock(MIGRATION_CONFIG);
    await db.migrate.latest(MIGRATION_CONFIG);
  };
  if ((db.client.config as Knex.Config).pool?.max === 1) await migrate();
  else await withDatabaseLock(db, 'schema', migrate);
}
