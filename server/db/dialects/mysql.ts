// MariaDB and MySQL through the `mysql2` driver the user supplies: opening the connection pool,
// what its errors mean, running statements, and the publish (no `returning` and no
// transaction-scoped advisory locks here: a publish's precondition is looked up before it writes).
import { createHash, randomUUID } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { AppError } from '../../../common/errors.js';
import type { ServerConfig } from '../../config.js';
import { connectFailure, firstLine, networkReason } from '../connect-failure.js';
import { QUIET, connectionMarks, knexClientWithDriver, loadDriver } from '../driver.js';
import { type AuditEntry, writeAudit } from '../audit.js';
import { cachedRows } from '../statements.js';
import { KEPT_COLUMNS, type Db, type DeliveryOutcome, type Dialect, type ErrorClass, type ImmutableRule, type PublishedRow, useDialect } from './index.js';
import { boundMysql2 } from './mysql2-driver.js';

/** Server error numbers (MariaDB and MySQL share them). */
const ER_DUP_ENTRY = 1062;
const ER_DUP_ENTRY_WITH_KEY_NAME = 1586;
const ER_LOCK_DEADLOCK = 1213;
const ER_LOCK_WAIT_TIMEOUT = 1205;
/** MariaDB 11.6+ with innodb_snapshot_isolation: "Record has changed since last read". */
const ER_CHECKREAD = 1020;
/**
 * Too many connections, access denied (1044, 1045), no database (1046, 1049), shutdown, killed,
 * gone away, and a statement stopped by its time limit (MariaDB's max_statement_time 1969, MySQL's
 * max_execution_time 3024): the database is not answering in time.
 */
const UNAVAILABLE_ERRNOS = new Set([1040, 1044, 1045, 1046, 1049, 1053, 1077, 1152, 1927, 1969, 2002, 2003, 2006, 2013, 3024, 4031]);
/** mysql2's own codes for sockets and protocol states that mean the connection is gone. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH',
  'PROTOCOL_CONNECTION_LOST', 'PROTOCOL_SEQUENCE_TIMEOUT', 'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'PROTOCOL_ENQUEUE_AFTER_QUIT', 'PROTOCOL_ENQUEUE_HANDSHAKE_TWICE',
]);

/** `case id when ? then ? ... end` of each outcome's value, or the one value when all have the same. */
function perRow(db: Db, outcomes: DeliveryOutcome[], value: (o: DeliveryOutcome) => Knex.Value, placeholder = '?'): unknown {
  const values = outcomes.map(value);
  if (values.every((v) => v === values[0])) return values[0] === null ? null : db.raw(placeholder, [values[0]!]);
  return db.raw(`case id ${outcomes.map(() => `when ? then ${placeholder}`).join(' ')} end`, outcomes.flatMap((o, i) => [o.id, values[i]!]));
}

/** What numberEvents reads of an event. */
const NUMBERED_COLUMNS = ['id', 'type', 'project_name'];

/** How long a publish waits for another publish of the same latest key. */
const LOCK_WAIT_SECONDS = 10;

/** A statement's result header: inserted 1, updated 2, unchanged 0 (the connection drops FOUND_ROWS). */
async function affectedRows(db: Db, query: Knex.QueryBuilder): Promise<number> {
  const { sql, bindings } = query.toSQL();
  const [header] = (await db.raw(sql, bindings as Knex.RawBinding[])) as [{ affectedRows: number }];
  return header.affectedRows;
}

/** Inserts a version row or replaces the one of the same coordinates, keeping its uid: which happened. */
async function upsertVersionRow(db: Db, row: Record<string, unknown>, coordinates: string[]): Promise<{ uid: string; created: boolean }> {
  const uid = randomUUID();
  const stamped = { ...row, updated_at: db.fn.now(3) };
  // A republish never changes a column of KEPT_COLUMNS once it holds a value (the provenance).
  const merged = Object.fromEntries(
    Object.keys(stamped).map((c) => [c, KEPT_COLUMNS.includes(c) ? db.raw('coalesce(??, values(??))', [c, c]) : db.raw('values(??)', [c])]),
  );
  const inserted = (await affectedRows(db, db('versions').insert({ ...stamped, uid }).onConflict(coordinates).merge(merged))) === 1;
  if (inserted) return { uid, created: true };
  const where = Object.fromEntries(coordinates.map((c) => [c, row[c]]));
  const stored = await db('versions').select('uid').where(where).first();
  return { uid: String(stored.uid), created: false };
}

/**
 * What is stored under the row's coordinates (the record, or else the content kept of a deleted
 * one, migration 20261127000000_immutable_versions): its creation date, and whether it holds the
 * row's values in the rule's content columns. Read under the key's lock, in the publish's transaction.
 */
async function storedContent(trx: Knex.Transaction, row: Record<string, unknown>, coordinates: string[], rule: ImmutableRule): Promise<{ creationDate: unknown; same: boolean } | undefined> {
  const where = coordinates.map((c) => `${c} = ?`).join(' and ');
  const same = rule.content.map((c) => `${c} <=> ?`).join(' and ');
  const read = (table: string) => `select creation_date, (${same}) as same from ${table} where ${where}`;
  const values = [...rule.content.map((c) => row[c]), ...coordinates.map((c) => row[c])] as Knex.RawBinding[];
  for (const table of ['versions', 'immutable_versions']) {
    const [rows] = (await trx.raw(read(table), values)) as [{ creation_date: unknown; same: unknown }[]];
    if (rows[0]) return { creationDate: rows[0].creation_date, same: Number(rows[0].same) === 1 };
  }
  return undefined;
}

/**
 * Runs `work` in a transaction that holds the named lock of `key`. GET_LOCK belongs to a
 * connection, not to a transaction: the lock is taken and released on the transaction's own
 * connection, around the transaction, so it is held until the commit is done. Without it, latest
 * publishes of one key deadlock on the gap locks of the key's index range, often enough that some
 * fail after every retry (mysql.test.ts).
 */
async function transactionWithLock<T>(db: Knex, key: string, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  const database = String((db.client.config.connection as { database?: string } | undefined)?.database ?? '');
  const name = `repoadmin:${createHash('sha1').update(`${database}\0${key}`).digest('hex')}`;
  const connection = await db.client.acquireConnection();
  try {
    const [lock] = await db.select(db.raw('get_lock(?, ?) as got', [name, LOCK_WAIT_SECONDS])).connection(connection);
    if (Number(lock?.got) !== 1) {
      throw new AppError('unavailable', 'the database is busy with other publishes of this version: try again shortly');
    }
    try {
      return await db.transaction(work, { connection });
    } finally {
      // Should the connection have died, the server has dropped its locks with it.
      await db
        .select(db.raw('release_lock(?) as released', [name]))
        .connection(connection)
        .catch(() => undefined);
    }
  } finally {
    await db.client.releaseConnection(connection);
  }
}

export const mysqlDialect: Dialect = {
  name: 'mysql',
  // A backslash is itself escaped inside MySQL string literals.
  likeEscape: "escape '\\\\'",
  // The generated column of the unique index versions_one_latest (migration 20261121000000_initial).
  latestOnly: 'latest_marker = 1',
  // NULL sorts first here; `column is null` (false before true) puts it last.
  nullsLast: (column, direction) => `${column} is null, ${column} ${direction}`,
  native: (sql) => sql,

  /**
   * With a precondition, what runs alongside it runs first, then its check: without a row, nothing
   * is written. A record that is not latest is then one statement (with an audit entry, a
   * transaction of the two). A latest one, and any of an immutable version, is written in one
   * transaction that holds the key's named lock: an immutable version's rule is checked there
   * first, then a latest one clears the key's other latest records, and the entry goes last.
   */
  async publishVersionRow(db, row, coordinates, key, latest, precondition, immutable, audit) {
    let actor: AuditEntry['actor'];
    if (precondition) {
      if (precondition.alongside) await db.raw(precondition.alongside.sql, precondition.alongside.values as Knex.RawBinding[]);
      const { sql, values } = precondition.check;
      const [allowed] = await cachedRows(db, `precondition:${precondition.shape}`, values, () => `${sql} limit 1`);
      if (!allowed) return undefined;
      actor = { userId: String(allowed.user_id), username: String(allowed.username), tokenId: allowed.token_id === null ? null : String(allowed.token_id) };
    }
    const withEntry = async (trx: Knex.Transaction, written: PublishedRow | undefined) => {
      if (written && audit) await writeAudit(trx, { ...audit, actor });
      return written;
    };
    if (!latest && !immutable) return audit ? db.transaction(async (trx) => withEntry(trx, await upsertVersionRow(trx, row, coordinates))) : upsertVersionRow(db, row, coordinates);
    return transactionWithLock(db, key.lock, async (trx) => {
      let values = row;
      if (immutable) {
        const stored = await storedContent(trx, row, coordinates, immutable);
        if (stored && !stored.same) return undefined;
        if (stored) values = { ...row, creation_date: stored.creationDate };
      }
      if (latest) await mysqlDialect.clearLatest(trx, key);
      return withEntry(trx, await upsertVersionRow(trx, values, coordinates));
    });
  },

  async clearLatest(trx, key) {
    await trx.raw('call versions_clear_latest(?, ?, ?, ?, ?)', [key.projectName, key.groupId, key.artifactId, key.branch, key.version]);
  },

  transactionWithKeyLock(db, lock, work) {
    return transactionWithLock(db, lock, work);
  },

  async countUpTo(db, table, key, counter, limit) {
    const query = db(table)
      .insert({ ...key, [counter]: 1 })
      .onConflict(Object.keys(key))
      .merge({ [counter]: db.raw('if(?? < ?, ?? + 1, ??)', [counter, limit, counter, counter]) });
    return (await affectedRows(db, query)) > 0;
  },

  async insertIfAbsent(db, table, row) {
    return (await affectedRows(db, db(table).insert(row).onConflict().ignore())) === 1;
  },

  async recordDeliveryOutcomes(trx, outcomes) {
    const ids = outcomes.map((o) => o.id);
    const retried = outcomes.some((o) => o.retryInMs !== null);
    await trx('deliveries')
      .whereIn('id', ids)
      .update({
        status: perRow(trx, outcomes, (o) => o.status),
        attempts: trx.raw('attempts + 1'),
        last_status: perRow(trx, outcomes, (o) => o.lastStatus, 'cast(? as signed)'),
        last_error: perRow(trx, outcomes, (o) => o.lastError),
        last_attempt_at: trx.raw('current_timestamp(3)'),
        next_attempt_at: retried
          ? trx.raw(
            `case id ${outcomes.map(() => 'when ? then current_timestamp(3) + interval ? microsecond').join(' ')} else null end`,
            outcomes.flatMap((o) => [o.id, o.retryInMs === null ? null : Math.round(o.retryInMs) * 1000]),
          )
          : null,
        duration_ms: perRow(trx, outcomes, (o) => o.durationMs, 'cast(? as signed)'),
        lease_until: null,
        lease_token: null,
        updated_at: trx.raw('current_timestamp(3)'),
      });
  },

  async numberEvents(trx, last, limit) {
    const rows: Record<string, unknown>[] = await trx('events').select(NUMBERED_COLUMNS).whereNull('seq').orderBy('id').limit(limit).forUpdate().skipLocked();
    if (rows.length === 0) return [];
    const numbered = rows.map((row, i): Record<string, unknown> & { id: number; seq: number } => ({ ...row, id: Number(row.id), seq: last + i + 1 }));
    const cases = numbered.map(() => 'when ? then cast(? as signed)').join(' ');
    await trx('events')
      .whereIn('id', numbered.map((row) => row.id))
      .update({ seq: trx.raw(`case id ${cases} end`, numbered.flatMap((row) => [row.id, row.seq])) });
    return numbered;
  },

  async updateAndRead(db, table, where, changes, column) {
    return db.transaction(async (trx) => {
      await trx(table).where(where).update(changes);
      const row = await trx(table).select(column).where(where).first();
      return (row as Record<string, unknown> | undefined)?.[column];
    });
  },

  async runStatement(db, statement, values) {
    const [rows] = (await db.raw(statement.sql, values as Knex.RawBinding[])) as [Record<string, unknown>[]];
    return rows;
  },

  // The session's time zone is UTC (openMysql): current_timestamp is utc_timestamp.
  now(db) {
    return db.raw('current_timestamp(3)');
  },

  nowPlus(db, ms) {
    return db.raw('current_timestamp(3) + interval ? microsecond', [Math.round(ms) * 1000]);
  },

  castWhole: (sql) => `cast(${sql} as signed)`,

  joinInOrder: 'straight_join',

  lockRowsKeepingKeys(query) {
    query.forUpdate();
  },

  async tryNamedLock(db, connection, name) {
    const [lock] = await db.select(db.raw(`get_lock(${NAMED_LOCK}, 0) as got`, [name])).connection(connection);
    return Number(lock?.got) === 1;
  },

  async releaseNamedLock(db, connection, name) {
    await db.select(db.raw(`release_lock(${NAMED_LOCK}) as released`, [name])).connection(connection);
  },

  async setVersionChange(trx, change) {
    await trx.raw('set @repoadmin_version_change = ?', [change]);
  },

};

/**
 * The named lock of a name (Dialect.tryNamedLock). Named locks belong to the whole server, not to
 * one database (advisory locks on PostgreSQL do): the database's name is part of it, so instances on
 * other databases of the same server never wait for each other. Hashed to stay within the 64
 * characters a lock name may have.
 */
const NAMED_LOCK = "concat('repoadmin.', sha1(concat(database(), char(0), ?)))";

/** Classifies an error of `mysql2`: its server error numbers and its own codes. */
export function classifyMysqlError(error: unknown): ErrorClass | undefined {
  const e = error as { errno?: number; code?: string; name?: string; message?: string } | undefined;
  if (!e) return undefined;
  if (e.errno === ER_DUP_ENTRY || e.errno === ER_DUP_ENTRY_WITH_KEY_NAME) return 'conflict';
  if (e.errno === ER_LOCK_DEADLOCK || e.errno === ER_LOCK_WAIT_TIMEOUT || e.errno === ER_CHECKREAD) return 'retry';
  if ((e.errno !== undefined && UNAVAILABLE_ERRNOS.has(e.errno)) || UNAVAILABLE_CODES.has(e.code ?? '') || e.name === 'KnexTimeoutError') {
    return 'unavailable';
  }
  if (/Can't add new command when connection is in closed state|Pool is closed|Connection lost|Unable to acquire a connection/i.test(e.message ?? '')) {
    return 'unavailable';
  }
  return undefined;
}

interface Connection {
  query(sql: string, callback: (error: Error | null) => void): void;
  destroy(): void;
}

/**
 * knex's mysql2 client with the driver module loaded from the user's folder, and a client-side
 * bound on every statement, as for PostgreSQL (mysql2-driver.ts): a server that stops answering
 * (packets dropped) would otherwise hold the request until TCP gives up. The server stops a
 * statement at the statement timeout; the client waits 1 s more for that answer.
 */
function mysqlKnex(config: ServerConfig['db'], driver: unknown): Knex {
  const marks = connectionMarks();
  return knexFactory({
    log: QUIET,
    client: knexClientWithDriver('mysql2', boundMysql2(driver, config.statementTimeoutMs + 1_000, marks), marks),
    connection: {
      host: config.host,
      port: config.port,
      user: config.user,
      password: config.password,
      database: config.database,
      charset: 'utf8mb4',
      // Dates travel as UTC both ways; the session below stores and compares them in UTC too.
      timezone: 'Z',
      // An update that changes nothing then reports 0 affected rows, so an upsert tells an insert
      // (1) from a replacement (2 or 0).
      flags: '-FOUND_ROWS',
      // Connecting until the server is ready for a query (docs/api.md, "Faults").
      connectTimeout: config.connectTimeoutMs,
    },
    // Waiting for a pool connection, which includes opening one: a request never waits longer.
    acquireConnectionTimeout: config.connectTimeoutMs,
    // Errors name the statement without its values (which may be password hashes or tokens).
    compileSqlOnError: false,
    pool: {
      min: 0,
      max: 10,
      // A connection whose statement was not answered in time is not handed out again.
      validate: marks.usable,
      // UTC for CURRENT_TIMESTAMP; backslash escapes in literals (what the driver's quoting expects);
      // a statement running longer than the statement timeout is stopped by the server: MariaDB's
      // max_statement_time (seconds), else MySQL's max_execution_time (milliseconds, reads only).
      // Part of connecting, so bounded by the connect timeout too: a set-up left unanswered would
      // otherwise hold its place in the pool until the pool's own limit on making one (30 s).
      afterCreate(connection: Connection, done: (error: Error | null, connection: Connection) => void) {
        let finished = false;
        const finish = (error: Error | null) => {
          if (finished) return;
          finished = true;
          clearTimeout(timer);
          // knex forgets a connection whose set-up failed: close it here.
          if (error) connection.destroy();
          done(error, connection);
        };
        const timer = setTimeout(() => {
          finish(Object.assign(new Error(`no answer within ${config.connectTimeoutMs} ms while setting up a connection`), { code: 'ETIMEDOUT' }));
        }, config.connectTimeoutMs);
        connection.query(
          "set time_zone = '+00:00', sql_mode = replace(replace(@@sql_mode, 'NO_BACKSLASH_ESCAPES', ''), ',,', ',')",
          (error) => {
            if (error) return finish(error);
            connection.query(`set max_statement_time = ${config.statementTimeoutMs / 1000}`, (mariadb) => {
              if (!mariadb) return finish(null);
              connection.query(`set max_execution_time = ${config.statementTimeoutMs}`, finish);
            });
          },
        );
      },
    },
  } as Knex.Config);
}

/** "MariaDB 10.11.19" or "MySQL 8.4.3", from the server's version string. */
async function serverName(db: Knex): Promise<string> {
  const [rows] = (await db.raw('select version() as version')) as [{ version: string }[]];
  const version = String(rows[0]?.version ?? '');
  return /mariadb/i.test(version) ? `MariaDB ${version.split('-')[0]}` : `MySQL ${version}`;
}

/** One line for a failed first connection: what went wrong and which setting to check. */
function describeMysqlConnectionError(error: unknown, config: ServerConfig['db']): string {
  const e = error as { code?: string; errno?: number };
  const badDatabase = e.errno === 1049;
  const denied = e.errno === 1044 || e.errno === 1045;
  const reason =
    networkReason(e.code) ??
    (e.code === 'ETIMEDOUT' ? 'no answer' : badDatabase ? 'the database does not exist' : denied ? 'access denied' : firstLine(error));
  return connectFailure('MariaDB/MySQL', config, reason, badDatabase ? 'database' : denied ? 'login' : 'address');
}

/** Opens the pool to a MariaDB or MySQL server and checks that it answers. */
export async function openMysql(config: ServerConfig['db']): Promise<{ db: Knex; description: string }> {
  const db = mysqlKnex(config, loadDriver(config.driver, config.driverPath));
  let name: string;
  try {
    name = await serverName(db);
  } catch (error) {
    await db.destroy();
    throw new AppError('unavailable', describeMysqlConnectionError(error, config), { cause: error });
  }
  useDialect(db, mysqlDialect);
  return { db, description: `${name} database ${config.database} on ${config.host}:${config.port}` };
}
