// What differs between database kinds, behind one small interface. Each kind has its own file:
// postgres.ts (a PostgreSQL server through `pg`), pglite.ts (embedded PGlite) and mysql.ts (MariaDB
// and MySQL through `mysql2`), each with its opening, error classification, statement running and
// publish statement. This module imports none of them: a kind registers its dialect for the
// database it opens (useDialect), and code that holds a knex asks for it (dialectOf).
import type { Knex } from 'knex';
import type { AuditEntry } from '../audit-entry.js';

export type Db = Knex | Knex.Transaction;

/** What a driver error means for the caller; undefined: nothing special (an internal error). */
export type ErrorClass = 'unavailable' | 'retry' | 'conflict';

/** A statement built once (server/db/statements.ts keeps them), run many times with new values. */
export interface Statement {
  /** With `?` placeholders, as knex.raw takes it. */
  sql: string;
  /** With the driver's own placeholders (`$1` for PostgreSQL). */
  native: string;
  /** Unique per SQL text: the prepared statement's name on each connection; none for a statement not kept. */
  name: string | undefined;
}

/** SQL with `?` placeholders and its values, in the order of the placeholders. */
export interface BoundSql {
  sql: string;
  values: unknown[];
}

/**
 * What must hold for a publish to be written, as SQL the publish runs with it
 * (server/policy/publish.ts makes it): `check` is a query that yields a row when the publish may
 * go ahead; `alongside` runs with it whatever `check` yields (recording a use). `shape` names the
 * SQL text, which is the same for every publish of that shape: only the values change.
 */
export interface Precondition {
  shape: string;
  /** Its row names the credential's user: `user_id`, `username`, `token_id` (null for a session). */
  check: BoundSql;
  alongside?: BoundSql;
}

/** A published row: its uid, and whether it was new. */
export interface PublishedRow {
  uid: string;
  created: boolean;
}

/**
 * An immutable version's rule for its publish (server/services/immutable.ts makes it). Once the
 * key's lock is held, the record stored under the coordinates, or else the content kept of a
 * deleted one (migration 20261127000000_immutable_versions), must hold the publish's values in each
 * of the `content` columns; if not, nothing is written. Where one is stored, its creation date is
 * written (a republish without a date keeps the stored one).
 */
export interface ImmutableRule {
  content: string[];
}

/**
 * Columns of versions that a republish never changes once they hold a value: the provenance
 * (docs/api.md, "Trusted publishing"), which each kind's publish keeps.
 */
export const KEPT_COLUMNS = ['provenance'];

/** The key whose publishes take turns (`lock` names it), and the version a latest publish keeps. */
export interface PublishKey {
  lock: string;
  projectName: string;
  groupId: string;
  artifactId: string;
  branch: string;
  version: string;
}

/** The pieces of SQL that differ between kinds in the queries server/db/versions.ts writes. */
export interface SqlForm {
  /** What follows `column like ?` so that a backslash escapes `%`, `_` and itself. */
  likeEscape: string;
  /**
   * The condition "latest records only", written as a constant so that the planner chooses the
   * index of latest records (versions_one_latest) for every value of the other columns.
   */
  latestOnly: string;
  /** `column direction` for an ORDER BY, with NULLs last whichever the direction. */
  nullsLast(column: string, direction: 'asc' | 'desc'): string;
  /**
   * A named subquery the planner runs on its own, before the query that reads it orders and pages
   * its rows (`with name as materialized (...)`): the latest-only search of a group reads its few
   * latest records first (versions.ts, pageQuery). Undefined where there is none to rely on.
   */
  fenced?(name: string, query: string): string;
  /** The SQL with the driver's own placeholders. */
  native(sql: string): string;
}

/** The outcome of one attempt of a claimed webhook delivery, as its row records it. */
export interface DeliveryOutcome {
  id: string;
  status: 'delivered' | 'failed' | 'pending';
  lastStatus: number | null;
  lastError: string | null;
  /** When a pending delivery is tried again, in milliseconds from now (database time); null otherwise. */
  retryInMs: number | null;
  durationMs: number;
}

/** What a change to versions is, beside a publish (server/db/events.ts, markVersionChange). */
export type VersionChange = 'latest' | 'restore' | 'quiet';

export interface Dialect extends SqlForm {
  name: 'postgres' | 'mysql';
  /**
   * Publishes a version row: inserts it, or replaces the row of the same coordinates keeping its
   * uid, and tells which happened. With `latest`, the key's other latest rows stop being latest in
   * the same step. Publishes of one key take turns. With a precondition, nothing is written unless
   * its check yields a row, and with an immutable version's rule unless it holds: then undefined.
   * With `audit` (which needs a precondition), the request's audit entry is written with the row,
   * in the same statement or transaction, its actor the user and token the check's row names: a
   * stored publish always has its entry, and a refused or rolled-back one has none from here.
   */
  publishVersionRow(
    db: Knex,
    row: Record<string, unknown>,
    coordinates: string[],
    key: PublishKey,
    latest: boolean,
    precondition?: Precondition,
    immutable?: ImmutableRule,
    audit?: AuditEntry,
  ): Promise<PublishedRow | undefined>;
  /**
   * The key's latest records other than `key.version` stop being latest: the first half of a latest
   * move, marked so for the event triggers. Called in a transaction that holds the key's lock (a
   * latest publish on MariaDB/MySQL, a restore that takes the latest back). One SQL routine per
   * kind: `versions_take_key` on PostgreSQL and PGlite (which the publish statement calls too),
   * `versions_clear_latest` on MariaDB and MySQL (migration 20261128120000_versions_clear_latest).
   */
  clearLatest(trx: Knex.Transaction, key: PublishKey): Promise<void>;
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
  /**
   * Records the outcomes of attempts of claimed deliveries, whose rows the transaction holds
   * locked, in one statement: each row's status, attempts plus one, last status and error, when it
   * was attempted and when it is tried again, and how long it took; their leases end.
   */
  recordDeliveryOutcomes(trx: Knex.Transaction, outcomes: DeliveryOutcome[]): Promise<void>;
  /**
   * Numbers up to `limit` committed events that have no number yet, in id order, from `last + 1`,
   * and reads of each what decides its deliveries (server/db/events.ts, NumberedEvent: not its
   * data). Rows an open transaction still writes are skipped: locked on MariaDB/MySQL, invisible on
   * PostgreSQL. Called in the transaction that holds the event_sequence row's lock.
   */
  numberEvents(trx: Knex.Transaction, last: number, limit: number): Promise<Record<string, unknown>[]>;
  /** Runs a statement (server/db/statements.ts) with its values; its rows. */
  runStatement(db: Db, statement: Statement, values: unknown[]): Promise<Record<string, unknown>[]>;
  /**
   * Marks what the transaction's next changes to versions are, for the event triggers (migration
   * 20261125100000_events): null is a publish. The caller clears it before the transaction ends.
   */
  setVersionChange(trx: Knex.Transaction, change: VersionChange | null): Promise<void>;
  /** The database's time now, to the millisecond (leases, retries and schedules run on database time). */
  now(db: Db): Knex.Raw;
  /** The database's time now plus `ms` milliseconds. */
  nowPlus(db: Db, ms: number): Knex.Raw;
  /** `sql` cast to a whole number of 64 bits. */
  castWhole(sql: string): string;
  /**
   * Locks the rows `query` selects against other updates and locks, not against inserts of rows
   * whose foreign key names them (PostgreSQL's FOR NO KEY UPDATE; MariaDB/MySQL's FOR UPDATE, which
   * does not wait on such inserts).
   */
  lockRowsKeepingKeys(query: Knex.QueryBuilder): void;
  /**
   * The join that reads its left side first, for a locking read whose rows to lock are found on
   * the left: MariaDB/MySQL lock every row a FOR UPDATE reads, so the locked table must be read by
   * key after them (STRAIGHT_JOIN); PostgreSQL locks only the rows returned (a plain join).
   */
  joinInOrder: string;
  /**
   * Takes the named lock `name` of this database on `connection`, which holds it until released or
   * closed, without waiting: true when taken now. Named locks of other databases on the same server
   * are other locks.
   */
  tryNamedLock(db: Knex, connection: unknown, name: string): Promise<boolean>;
  /** Lets go of the named lock `name` held on `connection`. */
  releaseNamedLock(db: Knex, connection: unknown, name: string): Promise<void>;
}

/**
 * The dialect of each opened database, by its knex client's configuration: the one object a knex
 * instance and its transactions share.
 */
const registry = new WeakMap<object, Dialect>();

/** Called by the kind that opened `db`. */
export function useDialect(db: Knex, dialect: Dialect): void {
  registry.set(db.client.config, dialect);
}

/** The dialect of a database opened by server/db/connect.ts, or of a transaction on it. */
export function dialectOf(db: Db): Dialect {
  const dialect = registry.get(db.client.config);
  if (!dialect) throw new Error('this database was not opened by openDatabase (server/db/connect.ts): its kind is not known');
  return dialect;
}
