// Opens the configured database: embedded PGlite (default), a PostgreSQL server through `pg`, or
// MariaDB/MySQL through the `mysql2` driver the user supplies. Each kind opens itself
// (server/db/dialects/<kind>.ts) and registers its dialect for the database it opened.
import type { Knex } from 'knex';
import type { ServerConfig } from '../config.js';
import { openMysql } from './dialects/mysql.js';
import { MEMORY, openPglite } from './dialects/pglite.js';
import { openPostgres } from './dialects/postgres.js';
import { MIGRATION_CONFIG } from './migrations/index.js';

export { MEMORY };

export interface Database {
  db: Knex;
  /** For the start-up line: "embedded PGlite at /path" or "PostgreSQL repoadmin on host:5432". */
  description: string;
  /** What the operator should know, for the start-up messages (a data folder that was open). */
  warnings: string[];
  close(): Promise<void>;
}

export async function openDatabase(config: ServerConfig['db']): Promise<Database> {
  if (config.kind === 'pglite') return openPglite(config);
  const { db, description } = config.kind === 'mysql' ? await openMysql(config) : await openPostgres(config);
  return { db, description, warnings: [], close: () => db.destroy() };
}

export async function migrateLatest(db: Knex): Promise<void> {
  await db.migrate.latest(MIGRATION_CONFIG);
}
