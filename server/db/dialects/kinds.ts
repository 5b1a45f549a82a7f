// What each database kind is, for the code that chooses and opens one (settings, opening, the
// server's start): the one table of the kinds' traits. What each kind's SQL looks like is its
// dialect's (index.ts and one file per kind); this module imports none of them, so the settings can
// read it without loading a driver.

/** `mysql` covers MariaDB and MySQL: one driver (`mysql2`), one dialect. */
export type DbKind = 'pglite' | 'postgres' | 'mysql';

export interface KindTraits {
  /** Embedded in this process: one process may open it (no `--workers`), nothing to connect to. */
  embedded: boolean;
  /** Has read replicas that report how far they have replayed (PostgreSQL's write-ahead log position). */
  readReplicas: boolean;
  /** The driver module bundled for it. */
  driver: string;
  defaultPort: number;
}

export const KINDS: Record<DbKind, KindTraits> = {
  pglite: { embedded: true, readReplicas: false, driver: '@electric-sql/pglite', defaultPort: 5432 },
  postgres: { embedded: false, readReplicas: true, driver: 'pg', defaultPort: 5432 },
  mysql: { embedded: false, readReplicas: false, driver: 'mysql2', defaultPort: 3306 },
};

/** The names the `--repoadmin_db_jdbc` setting accepts, each with the kind it names. */
export const KIND_NAMES: Record<string, DbKind> = {
  pglite: 'pglite',
  postgres: 'postgres',
  postgresql: 'postgres',
  mariadb: 'mysql',
  mysql: 'mysql',
};
