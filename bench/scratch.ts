// A database of its own for a benchmark that measures statements in its own process: made on the
// PostgreSQL server REPOADMIN_BENCH_PG_URL names, opened and migrated as the server does, dropped
// when the work ends, however it ends.
import knexFactory, { type Knex } from 'knex';
import { MEMORY, migrateLatest, openDatabase } from '../server/db/connect.js';

export async function onScratchDatabase<T>(prefix: string, work: (db: Knex) => Promise<T>): Promise<T> {
  const pgUrl = new URL(process.env.REPOADMIN_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const name = `${prefix}_${process.pid}`;
  const admin = knexFactory({ client: 'pg', connection: pgUrl.href, pool: { min: 0, max: 1 } });
  try {
    await admin.raw(`create database ${name}`);
    const opened = await openDatabase({
      kind: 'postgres', driver: 'pg', host: pgUrl.hostname, port: Number(pgUrl.port || 5432), user: decodeURIComponent(pgUrl.username || 'postgres'),
      password: decodeURIComponent(pgUrl.password), database: name, connectTimeoutMs: 5_000, statementTimeoutMs: 10_000, dataDir: MEMORY,
    });
    try {
      await migrateLatest(opened.db);
      return await work(opened.db);
    } finally {
      await opened.close();
    }
  } finally {
    await admin.raw(`drop database if exists ${name} with (force)`);
    await admin.destroy();
  }
}
