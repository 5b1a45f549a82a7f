// Test databases: embedded PGlite always, PostgreSQL when REPOADMIN_TEST_PG_URL is set, MariaDB or
// MySQL when REPOADMIN_TEST_MYSQL_URL is set (each test database is new, made on that server and
// dropped afterwards).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { inject } from 'vitest';
import type { DbKind, ServerConfig } from '../../server/config.js';
import { type Database, MEMORY, migrateLatest, openDatabase } from '../../server/db/connect.js';
import { skipping } from './skip.js';

export const PG_URL = process.env.REPOADMIN_TEST_PG_URL;
export const MYSQL_URL = process.env.REPOADMIN_TEST_MYSQL_URL;

/** The variables that bring in the rows of a database server, with an example value. */
const VARIABLES = {
  postgres: { name: 'REPOADMIN_TEST_PG_URL', example: 'postgres://postgres@127.0.0.1:5432/postgres', what: 'PostgreSQL' },
  mysql: { name: 'REPOADMIN_TEST_MYSQL_URL', example: 'mysql://root@127.0.0.1:3306/test', what: 'MariaDB/MySQL' },
} as const;
const told = new Set<keyof typeof VARIABLES>();

/** Says, once per test file, that the rows of this database server are not run, and what to set. */
function tellSkipped(kind: keyof typeof VARIABLES): void {
  if (told.has(kind)) return;
  told.add(kind);
  const { name, example, what } = VARIABLES[kind];
  skipping(`the ${what} rows of this file`, `${name} is not set (e.g. ${name}=${example})`);
}

/**
 * The database kinds to run against: PostgreSQL and MariaDB/MySQL too when configured (required
 * under REPOADMIN_REQUIRE_PG=1 and REPOADMIN_REQUIRE_MYSQL=1).
 */
export function dbKinds(): DbKind[] {
  if (!PG_URL && process.env.REPOADMIN_REQUIRE_PG === '1') {
    throw new Error('REPOADMIN_REQUIRE_PG=1 but REPOADMIN_TEST_PG_URL is not set');
  }
  const kinds: DbKind[] = ['pglite'];
  if (PG_URL) kinds.push('postgres');
  else tellSkipped('postgres');
  if (mysqlAvailable()) kinds.push('mysql');
  return kinds;
}

/** PostgreSQL is required for this test: fail when REPOADMIN_REQUIRE_PG=1, else report it as skipped. */
export function pgAvailable(): boolean {
  return dbKinds().includes('postgres');
}

/** MariaDB or MySQL is required for this test: fail when REPOADMIN_REQUIRE_MYSQL=1, else report it as skipped. */
export function mysqlAvailable(): boolean {
  if (!MYSQL_URL && process.env.REPOADMIN_REQUIRE_MYSQL === '1') {
    throw new Error('REPOADMIN_REQUIRE_MYSQL=1 but REPOADMIN_TEST_MYSQL_URL is not set');
  }
  if (!MYSQL_URL) tellSkipped('mysql');
  return Boolean(MYSQL_URL);
}

export interface TestDatabase {
  settings: ServerConfig['db'];
  drop(): Promise<void>;
}

/** The server's settings for a database of this name on the server a test URL names. */
function settingsFrom(
  address: string,
  database: string,
  server: { kind: 'postgres' | 'mysql'; driver: string; port: number; user: string },
): ServerConfig['db'] {
  const url = new URL(address);
  return {
    kind: server.kind,
    driver: server.driver,
    host: url.hostname,
    port: Number(url.port || server.port),
    user: decodeURIComponent(url.username || server.user),
    password: decodeURIComponent(url.password || ''),
    database,
    dataDir: MEMORY,
    connectTimeoutMs: 5_000,
    statementTimeoutMs: 10_000,
  };
}

function pgSettings(database: string): ServerConfig['db'] {
  return settingsFrom(PG_URL!, database, { kind: 'postgres', driver: 'pg', port: 5432, user: 'postgres' });
}

function adminConnection() {
  return knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } });
}

function mysqlSettings(database: string): ServerConfig['db'] {
  return settingsFrom(MYSQL_URL!, database, { kind: 'mysql', driver: 'mysql2', port: 3306, user: 'root' });
}

async function onMysqlServer(work: (conn: Knex) => Promise<unknown>): Promise<void> {
  const { host, port, user, password } = mysqlSettings('');
  const conn = knexFactory({ client: 'mysql2', connection: { host, port, user, password }, pool: { min: 0, max: 1 } });
  try {
    await work(conn);
  } finally {
    await conn.destroy();
  }
}

/** MariaDB/MySQL's "Error dropping database (can't rmdir ...)". */
const ER_DB_DROP_RMDIR = 1010;

/**
 * Ends the sessions on the database, then drops it: what `drop database ... with (force)` does on PostgreSQL.
 * A session of another test shows this database as its own while it reads this database's catalogue
 * (MariaDB loading its triggers for `information_schema.triggers` without a lookup by table schema),
 * and is ended too: tests read the catalogue of their own database only.
 */
async function dropMysqlDatabase(conn: Knex, name: string): Promise<void> {
  const killSessions = async () => {
    const [sessions] = await conn.raw('select id as id from information_schema.processlist where db = ? and id <> connection_id()', [name]);
    for (const { id } of sessions as { id: number }[]) await conn.raw(`kill connection ${Number(id)}`).catch(() => {});
  };
  await killSessions();
  // The drop fails with 1010 ("Error dropping database", errno 39 "Directory not empty") when the
  // database's folder holds a file that is no table: a killed session's ALTER TABLE still rolling
  // back (its temporary table files, gone once it is done), or a migration stopped inside CREATE
  // TRIGGER, after which MariaDB leaves `versions.TRG-` there for good. Tried again for up to 5 s;
  // then, if every table is gone, the empty database's folder is left behind with that file rather
  // than failing the test that made it (what a test checks of a stopped migration is the next start).
  for (let attempt = 0; ; attempt++) {
    try {
      await conn.raw(`drop database if exists ${name}`);
      break;
    } catch (error) {
      if ((error as { errno?: number }).errno !== ER_DB_DROP_RMDIR) throw error;
      if (attempt >= 25) {
        const [tables] = await conn.raw('select count(*) as n from information_schema.tables where table_schema = ?', [name]);
        if (Number((tables as { n: number }[])[0]!.n) === 0) break;
        throw error;
      }
      await killSessions();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  // A session opened between the listing and the drop keeps the dropped database as its current one
  // (MariaDB answers its queries with "table doesn't exist"); PostgreSQL's `with (force)` leaves none.
  await killSessions();
}

/** Copies the run's migrated embedded database (test/helpers/pglite-template.ts) to `root`/data, and returns that folder. */
export function copyPgliteTemplate(root: string): string {
  const dataDir = path.join(root, 'data');
  fs.cpSync(inject('pgliteTemplate'), dataDir, { recursive: true });
  return dataDir;
}

/**
 * A database for a test server: on PGlite a copy of the run's migrated embedded database
 * (test/helpers/pglite-template.ts) in a folder of its own, removed by `drop`; on a database
 * server a new, empty database, which the server migrates.
 */
export async function createServerTestDatabase(kind: DbKind): Promise<TestDatabase> {
  if (kind !== 'pglite') return createTestDatabase(kind);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'repoadmin-db-'));
  const dataDir = copyPgliteTemplate(root);
  const database = await createTestDatabase(kind, dataDir);
  return { ...database, drop: async () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** A test database of `kind`, opened as the server opens one and migrated; `close` also drops it. */
export async function openMigratedDatabase(kind: DbKind): Promise<Database> {
  const database = await createServerTestDatabase(kind);
  const opened = await openDatabase(database.settings);
  await migrateLatest(opened.db);
  return {
    ...opened,
    close: async () => {
      await opened.close();
      await database.drop();
    },
  };
}

export async function createTestDatabase(kind: DbKind, dataDir: string = MEMORY): Promise<TestDatabase> {
  if (kind === 'pglite') {
    return {
      settings: { kind, driver: '@electric-sql/pglite', host: '', port: 0, user: '', password: '', database: '', dataDir, connectTimeoutMs: 5_000, statementTimeoutMs: 10_000 },
      drop: async () => {},
    };
  }
  const name = `repoadmin_t_${randomBytes(6).toString('hex')}`;
  if (kind === 'mysql') {
    if (!MYSQL_URL) throw new Error('REPOADMIN_TEST_MYSQL_URL is not set');
    await onMysqlServer((conn) => conn.raw(`create database ${name} character set utf8mb4`));
    return { settings: mysqlSettings(name), drop: () => onMysqlServer((conn) => dropMysqlDatabase(conn, name)) };
  }
  if (!PG_URL) throw new Error('REPOADMIN_TEST_PG_URL is not set');
  const admin = adminConnection();
  try {
    await admin.raw(`create database ${name}`);
  } finally {
    await admin.destroy();
  }
  return {
    settings: pgSettings(name),
    drop: async () => {
      const conn = adminConnection();
      try {
        await conn.raw(`drop database if exists ${name} with (force)`);
      } finally {
        await conn.destroy();
      }
    },
  };
}
