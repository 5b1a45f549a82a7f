// Running a migration's statements so that the migration may run again from any point.
//
// MariaDB and MySQL commit each DDL statement on its own: a start stopped in the middle of a
// migration (kill -9, SIGTERM, a lost connection) leaves the statements before that point done and
// the migration not recorded, so the next start runs the whole migration again. PostgreSQL runs the
// migrations in one transaction, but a migration may opt out of it. Hence the rule for every
// migration (also written at the top of ./index.ts):
//
// - Every schema change goes through `ensureSchema`: it runs the statements one by one, and one whose
//   table, column, index, constraint, trigger or function is already there counts as done.
// - A statement that writes data gives the same result when it runs twice (`on conflict` / `on
//   duplicate key update` with the computed value, never `+ 1` on a second run).
// - A function or a view is created with `create or replace`.
import type { Knex } from 'knex';

/** PostgreSQL: duplicate table or index, object (constraint, trigger), column, function. */
const PG_ALREADY_THERE = new Set(['42P07', '42710', '42701', '42723']);
/** MariaDB/MySQL: table, column, key name, primary key, trigger, foreign key name (MySQL 8) already there. */
const MYSQL_ALREADY_THERE = new Set([1050, 1060, 1061, 1068, 1359, 1826]);

function alreadyThere(error: unknown): boolean {
  const { code, errno, message } = error as { code?: string; errno?: number; message?: string };
  if (typeof code === 'string' && PG_ALREADY_THERE.has(code)) return true;
  if (typeof errno !== 'number') return false;
  // MariaDB names a foreign key that is already there "Can't create table ... (errno: 121 ...)".
  return MYSQL_ALREADY_THERE.has(errno) || (errno === 1005 && /errno: 121\b/.test(message ?? ''));
}

/** One statement; inside a transaction (PostgreSQL) under a savepoint, so that a failure leaves the transaction usable. */
async function runStatement(knex: Knex, sql: string, bindings: readonly Knex.RawBinding[]): Promise<void> {
  try {
    if (knex.isTransaction) await knex.transaction((savepoint) => savepoint.raw(sql, bindings));
    else await knex.raw(sql, bindings);
  } catch (error) {
    if (!alreadyThere(error)) throw error;
  }
}

/**
 * Runs schema changes so that running them again is harmless: each statement of each step (a knex
 * schema builder, which may stand for several statements, or one SQL statement) runs on its own, and
 * one whose object is already there counts as done.
 */
export async function ensureSchema(knex: Knex, ...steps: (Knex.SchemaBuilder | string)[]): Promise<void> {
  for (const step of steps) {
    const statements = typeof step === 'string' ? [{ sql: step, bindings: [] }] : step.toSQL();
    for (const { sql, bindings } of statements) await runStatement(knex, sql, (bindings ?? []) as Knex.RawBinding[]);
  }
}
