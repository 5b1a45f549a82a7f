// Test databases: embedded PGlite always, and PostgreSQL when REPOADMIN_TEST_PG_URL is set (each
// test database is new, made from that server's `postgres` database and dropped afterwards).
import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import type { DbKind, ServerConfig } from '../../server/config.js';
import { MEMORY } from '../../server/db/connect.js';

export const PG_URL = process.env.REPOADMIN_TEST_PG_URL;

/** The database kinds to run against: PostgreSQL too when configured (required under REPOADMIN_REQUIRE_PG=1). */
export function dbKinds(): DbKind[] {
  if (!PG_URL && process.env.REPOADMIN_REQUIRE_PG === '1') {
    throw new Error('REPOADMIN_REQUIRE_PG=1 but REPOADMIN_TEST_PG_URL is not set');
  }
  return PG_URL ? ['pglite', 'postgres'] : ['pglite'];
}

/** PostgreSQL is required for this test: fail when REPOADMIN_REQUIRE_PG=1, else report it as skipped. */
export function pgAvailable(): boolean {
  return dbKinds().includes('postgres');
}

export interface TestDatabase {
  settings: ServerConfig['db'];
  drop(): Promise<void>;
}

function pgSettings(database: string): ServerConfig['db'] {
  const url = new URL(PG_URL!);
  return {
    kind: 'postgres',
    driver: 'pg',
    host: url.hostname,
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username || 'postgres'),
    password: decodeURIComponent(url.password || ''),
    database,
    dataDir: MEMORY,
    connectTimeoutMs: 5_000,
    statementTimeoutMs: 10_000,
  };
}

function adminConnection() {
  return knexFactory({ client: 'pg', connection: PG_URL, pool: { min: 0, max: 1 } });
}

export async function createTestDatabase(kind: DbKind, dataDir: string = MEMORY): Promise<TestDatabase> {
  if (kind === 'pglite') {
    return {
      settings: { kind, driver: '@electric-sql/pglite', host: '', port: 0, user: '', password: '', database: '', dataDir, connectTimeoutMs: 5_000, statementTimeoutMs: 10_000 },
      drop: async () => {},
    };
  }
  if (!PG_URL) throw new Error('REPOADMIN_TEST_PG_URL is not set');
  const name = `repoadmin_t_${randomBytes(6).toString('hex')}`;
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
