// What differs between database kinds, behind one small interface: PGlite and PostgreSQL share the
// `postgres` dialect, MariaDB and MySQL the `mysql` one. Everything else is plain knex.
import type { Knex } from 'knex';
import type { Statement } from '../statements.js';
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
   * statement; tells which happened. Where the dialect can, the statement first takes the lock of
   * `lockKey` for the rest of the transaction, so publishes of one key change its rows in turn.
   */
  upsertVersionRow(db: Db, row: Record<string, unknown>, coordinates: string[], lockKey: string): Promise<{ uid: string; created: boolean }>;
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
  /** Runs a statement built once (server/db/statements.ts) with its values; its rows. */
  runStatement(db: Db, statement: Statement, values: unknown[]): Promise<Record<string, unknown>[]>;
  /** Classifies a driver error: database unreachable, worth retrying (deadlock, lock timeout), unique key clash. */
  classifyError(error: unknown): ErrorClass | undefined;
}

/** The dialect of a knex instance or transaction (knex names it: `postgresql` or `mysql`). */
export function dialectOf(db: Db): Dialect {
  return db.client.dialect === 'mysql' ? mysqlDialect : postgresDialect;
}
