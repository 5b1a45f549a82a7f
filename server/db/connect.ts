// Opens the configured database: embedded PGlite (default), a PostgreSQL server through `pg`, or
// MariaDB/MySQL through the `mysql2` driver the user supplies.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { AppError } from '../../common/errors.js';
import type { ServerConfig } from '../config.js';
import { describeMysqlConnectionError, mysqlKnex, serverName } from './dialects/mysql.js';
import { lockDataDir } from './lock.js';
import { MIGRATION_CONFIG } from './migrations/index.js';

const require = createRequire(import.meta.url);

export interface Database {
  db: Knex;
  /** For the start-up line: "embedded PGlite at /path" or "PostgreSQL repoadmin on host:5432". */
  description: string;
  close(): Promise<void>;
}

export const MEMORY = 'memory://';

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

function postgresClient(driver: unknown): typeof Knex.Client {
  const ClientPG = require('knex/lib/dialects/postgres/index.js') as typeof Knex.Client;
  return class ClientWithDriver extends ClientPG {
    _driver() {
      return driver;
    }
  } as unknown as typeof Knex.Client;
}

function describeConnectionError(error: unknown, config: ServerConfig['db']): string {
  const e = error as { code?: string; message?: string };
  const where = `PostgreSQL at ${config.host}:${config.port} (database ${config.database}, user ${config.user})`;
  const reason =
    e.code === 'ECONNREFUSED'
      ? 'connection refused'
      : e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN'
        ? 'unknown host'
        : e.code === '3D000'
          ? 'the database does not exist'
          : e.code === '28P01' || e.code === '28000'
            ? 'authentication failed'
            : (e.message ?? String(error)).split('\n')[0];
  const setting =
    e.code === '3D000'
      ? '--repoadmin_db_database / REPO_MAN_DB_DATABASE'
      : e.code === '28P01' || e.code === '28000'
        ? '--repoadmin_db_username, --repoadmin_db_password / REPO_MAN_DB_USER, REPO_MAN_DB_PASS'
        : '--repoadmin_db_host, --repoadmin_db_port / REPO_MAN_DB_HOST, REPO_MAN_DB_PORT';
  return `cannot connect to ${where}: ${reason}; check ${setting}`;
}

/** Where knex's own warnings go: the server's log, not console.log (which would break its JSON lines). */
export interface DatabaseLog {
  warn(fields: object, message: string): void;
}

/**
 * knex writes pool and connection trouble ("Acquire connection error", with a stack) to the console
 * unless given a `log`. Its messages go to the server's log, one line each; the error that reaches
 * a request is logged there already, with its stack. Without a log, knex keeps writing to the console.
 */
function knexLog(log: DatabaseLog | undefined): Knex.Config['log'] {
  if (!log) return undefined;
  const write = (message: unknown) => log.warn({ source: 'knex' }, String(message).split('\n')[0]!);
  return { warn: write, error: write, deprecate: write, debug: () => {} };
}

export async function openDatabase(config: ServerConfig['db'], log?: DatabaseLog): Promise<Database> {
  if (config.kind === 'pglite') {
    const inMemory = config.dataDir === MEMORY;
    const release = inMemory ? () => {} : lockDataDir(config.dataDir);
    try {
      const ClientPgLite = require('knex-pglite') as typeof Knex.Client;
      const db = knexFactory({
        client: ClientPgLite,
        dialect: 'postgres',
        connection: inMemory ? {} : { filename: config.dataDir },
        log: knexLog(log),
      } as Knex.Config);
      await db.raw('select 1');
      return {
        db,
        description: inMemory ? 'embedded PGlite in memory' : `embedded PGlite at ${config.dataDir}`,
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
    client: postgresClient(loadDriver(config.driver, config.driverPath)),
    connection: {
      host: config.host,
      port: config.port,
      user: config.user,
      password: config.password,
      database: config.database,
      connectionTimeoutMillis: 10_000,
    },
    pool: { min: 0, max: 10, acquireTimeoutMillis: 15_000 },
    log: knexLog(log),
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
    close: () => db.destroy(),
  };
}

async function openMysql(config: ServerConfig['db']): Promise<Database> {
  const db = mysqlKnex(config, loadDriver(config.driver, config.driverPath));
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
    close: () => db.destroy(),
  };
}

export async function migrateLatest(db: Knex): Promise<void> {
  await db.migrate.latest(MIGRATION_CONFIG);
}
