// Opens the configured database: embedded PGlite (default), a PostgreSQL server through `pg`, or
// MariaDB/MySQL through the `mysql2` driver the user supplies. Each kind opens itself
// (server/db/dialects/<kind>.ts) and registers its dialect for the database it opened.
import type { Knex } from 'knex';
import type { ServerConfig } from '../config.js';
import { withDatabaseLock } from './database-lock.js';
import type { DbKind } from './dialects/kinds.js';
import { openMysql } from './dialects/mysql.js';
import { MEMORY, openPglite } from './dialects/pglite.js';
import { openPostgres, openPostgresReplica } from './dialects/postgres.js';
import { MIGRATION_CONFIG } from './migrations/index.js';

export { MEMORY };

export interface Database {
  db: Knex;
  /** For the start-up line: "embedded PGlite at /path" or "PostgreSQL repoadmin on host:5432". */
  description: string;
  /** What the operator should know, for the start-up messages (a data folder that was open). */
  warnings: string[];
  /** The read replica's pool (PostgreSQL with --repoadmin_db_read_host), not yet connected. */
  replica?: Knex;
  close(): Promise<void>;
}

/** How each kind opens; a server kind's pool is closed by destroying it. */
const OPENERS: Record<DbKind, (config: ServerConfig['db']) => Promise<Database>> = {
  pglite: openPglite,
  postgres: async (config) => {
    const { db, description } = await openPostgres(config);
    const replica = config.read && openPostgresReplica(config, config.read);
    return { db, description, warnings: [], replica, close: () => db.destroy() };
  },
  mysql: async (config) => {
    const { db, description } = await openMysql(config);
    return { db, description, warnings: [], close: () => db.destroy() };
  },
};

export function openDatabase(config: ServerConfig['db']): Promise<Database> {
  return OPENERS[config.kind](config);
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
