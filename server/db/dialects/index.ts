// What differs between database kinds, behind one small interface: PGlite and PostgreSQL share the
// `postgres` dialect, MariaDB and MySQL the `mysql` one. Everything else is plain knex.
import type { Knex } from 'knex';
import { mysqlDialect } from './mysql.js';
import { postgresDialect } from './postgres.js';

export type Db = Knex | Knex.Transaction;

/** What a driver error means for the caller; undefined: nothing special (an internal error). */
export type ErrorClass = 'unavailable' | 'retry' | 'conflict';

export interface Dialect {
  name: 'postgres' | 'mysql';
  /** What follows `?? like ?` so that a backslash escapes `%`, `_` and itself. */
  likeEscape: string;
  /**
   * Inserts a version row, or replaces the row of the same coordinates keeping its uid, in one
   * statement; tells which happened.
   */
  upsertVersionRow(db: Db, row: Record<string, unknown>, coordinates: string[]): Promise<{ uid: string; created: boolean }>;
  /** Runs `work` in a transaction that holds an exclusive lock on `key` until it has ended. */
  transactionWithLock<T>(db: Knex, key: string, work: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
  /**
   * Adds one to the counter column of the row with these key values (inserting it at 1) unless it
   * has reached `limit`, in one statement: true when it was counted.
   */
  countUpTo(db: Db, table: string, key: Record<string, unknown>, counter: string, limit: number): Promise<boolean>;
  /** Inserts the row unless it clashes with an existing one on a unique key: true when inserted. */
  insertIfAbsent(db: Db, table: string, row: Record<string, unknown>): Promise<boolean>;
  /** Updates the rows `where` selects and reads `column` of the first one after the update. */
  updateAndRead(db: Db, table: string, where: Record<string, unknown>, changes: Record<string, unknown>, column: string): Promise<unknown>;
  /** Classifies a driver error: database unreachable, worth retrying (deadlock, lock timeout), unique key clash. */
  classifyError(error: unknown): ErrorClass | undefined;
}

/** The dialect of a knex instance or transaction (knex names it: `postgresql` or `mysql`). */
export function dialectOf(db: Db): Dialect {
  return db.client.dialect === 'mysql' ? mysqlDialect : postgresDialect;
}

/** Deadlocks and lock timeouts are retried this many times in all. */
const ATTEMPTS = 5;

/**
 * Runs `work` again when it failed on a deadlock or a lock timeout (the database rolled it back),
 * after a short random pause so the contenders do not meet again.
 */
export async function withRetries<T>(db: Db, work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= ATTEMPTS || dialectOf(db).classifyError(error) !== 'retry') throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
    }
  }
}
