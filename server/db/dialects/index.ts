// What differs between database kinds, behind one small interface: PGlite and PostgreSQL share the
// `postgres` dialect, MariaDB and MySQL the `mysql` one. Everything else is plain knex.
import type { Knex } from 'knex';
import type { Statement } from '../statements.js';
import { mysqlDialect } from './mysql.js';
import { postgresDialect } from './postgres.js';

export type Db = Knex | Knex.Transaction;

/** What a driver error means for the caller; undefined: nothing special (an internal error). */
export type ErrorClass = 'unavailable' | 'retry' | 'conflict';

/**
 * What the database checks of a publish's credential, the same rules as the separate lookup
 * (server/services/auth.ts, tokens.ts, versions.ts): a session token's user still exists under its
 * name with the token's version, a project token is known, of the scope publish, not expired and
 * used within the last minute (else its last use is due to be recorded); the user need not change
 * the password and is an administrator or belongs to `projectName`, the record's project.
 */
export type PublishCheck =
  | { kind: 'session'; userId: string; username: string; tokenVersion: number; projectName: string }
  | { kind: 'project'; tokenHash: string; projectName: string; now: Date; usedSince: Date };

/** The key whose publishes take turns (`lock` names it), and the version a latest publish keeps. */
export interface PublishKey {
  lock: string;
  projectName: string;
  groupId: string;
  artifactId: string;
  branch: string;
  version: string;
}

export interface Dialect {
  name: 'postgres' | 'mysql';
  /** What follows `?? like ?` so that a backslash escapes `%`, `_` and itself. */
  likeEscape: string;
  /**
   * Publishes a version row: inserts it, or replaces the row of the same coordinates keeping its
   * uid, and tells which happened. With `latest`, the key's other latest rows stop being latest in
   * the same transaction. Publishes of one key take turns: each holds the key's lock until its
   * commit.
   */
  publishVersionRow(
    db: Knex,
    row: Record<string, unknown>,
    coordinates: string[],
    key: PublishKey,
    latest: boolean,
  ): Promise<{ uid: string; created: boolean }>;
  /**
   * Where the dialect can: publishes as publishVersionRow does, in one statement with the check
   * that the credential still holds and may publish to the record's project; undefined, with
   * nothing written, when it does not.
   */
  publishCheckedVersionRow?(
    db: Knex,
    row: Record<string, unknown>,
    coordinates: string[],
    key: PublishKey,
    latest: boolean,
    check: PublishCheck,
  ): Promise<{ uid: string; created: boolean } | undefined>;
  /**
   * Runs `work` in a transaction that holds the lock publishes of this key take (`PublishKey.lock`),
   * so that it takes turns with them: deleting and restoring records move the latest flag safely.
   */
  transactionWithKeyLock<T>(db: Knex, lock: string, work: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
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
