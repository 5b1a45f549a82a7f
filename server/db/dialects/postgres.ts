// A PostgreSQL server through the `pg` driver: opening the connection pool, what its errors mean,
// running statements as named prepared statements, and the publish statement (`insert ... on
// conflict ... returning` after a transaction-scoped advisory lock). PGlite (pglite.ts) speaks the
// same SQL and borrows all but the opening and the statement running.
import { randomUUID } from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { AppError } from '../../../common/errors.js';
import type { ServerConfig } from '../../config.js';
import { CLIENT_TIMEOUT } from '../client-timeout.js';
import { connectFailure, firstLine, networkReason } from '../connect-failure.js';
import { QUIET, connectionMarks, knexClientWithDriver, loadDriver } from '../driver.js';
import { type AuditEntry, auditFromRowSql, entryValues } from '../audit.js';
import { cachedRows } from '../statements.js';
import { KEPT_COLUMNS, type Db, type DeliveryOutcome, type Dialect, type ErrorClass, type ImmutableRule, type Precondition, type PublishKey, type SqlForm, useDialect } from './index.js';
import { boundPg, poolStatementRows } from './pg-driver.js';

/**
 * SQLSTATE codes (PostgreSQL, appendix A) of a database that cannot serve us now: connection
 * exceptions (08), insufficient resources (53: too many clients, disk full, out of memory),
 * operator intervention (57: shutdowns, a statement cancelled by statement_timeout), refused
 * logins (28), a database that does not exist (3D000) or does not accept connections (55000
 * "not currently accepting connections"), a lock not available in time (55P03), and a write sent
 * to a server that is (or has just become) a replica (25006 read_only_sql_transaction: during a
 * failover, or while Patroni restarts a crashed primary read-only before promoting it again).
 */
const UNAVAILABLE_STATES = /^(08|53|57|28)|^(3D000|55000|55P03|25006)$/;

/**
 * The codes after which a connection is not used again: its server shut down or crashed (57P01,
 * 57P02), is starting or recovering (57P03), is a replica now (25006), or the connection itself
 * broke (08, socket errors). The pool opens a new one, which HAProxy's primary port takes to the
 * primary of the moment (docs/operations.md, "Failover").
 */
const DROP_STATES = /^08|^(57P01|57P02|57P03|25006)$/;

/** A statement failed in a way that makes its connection useless: drop it rather than pool it again. */
export function dropsConnection(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null | undefined;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (DROP_STATES.test(code) || NETWORK_CODES.has(code)) return true;
  return typeof e?.message === 'string' && /Connection terminated|connection error/i.test(e.message);
}

/** deadlock_detected, serialization_failure: the transaction may simply run again. */
const RETRY_STATES = new Set(['40P01', '40001']);

/** Socket errors on the way to the database. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Messages of the drivers and the pool without a code: pg ("timeout expired" when connecting takes
 * longer than connectionTimeoutMillis, "Connection terminated ..."), knex ("Unable to acquire a
 * connection" once destroyed) and PGlite once closed. knex puts the statement before the driver's
 * message, with " - " between.
 */
const UNAVAILABLE_MESSAGES =
  /(^| - )timeout expired$|Connection terminated|Client was closed|Client has encountered a connection error|Unable to acquire a connection|PGlite is closed/i;

/** How much longer than the server's statement_timeout the client waits for an answer. */
const CLIENT_MARGIN_MS = 1_000;

/** The SQL of PostgreSQL and PGlite in the queries server/db/versions.ts writes. */
export const postgresSql: SqlForm = {
  likeEscape: "escape '\\'",
  // The partial index versions_one_latest is `where latest_version`.
  latestOnly: 'latest_version',
  nullsLast: (column, direction) => `${column} ${direction} nulls last`,
  native(sql) {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  },
};

/**
 * The statement that publishes a version row: inserts it, or replaces the row of the same
 * coordinates keeping its uid, and tells which happened (`xmax = 0` holds for a row this statement
 * inserted, not for one it updated). The benchmark sends the same statement straight through `pg`.
 *
 * Its first step calls `versions_take_key` (migration 20261123120000_versions_take_key), which
 * takes the transaction-scoped advisory lock of the record's key and, for a latest record, clears
 * the key's other latest records. The function is VOLATILE, so its UPDATE reads a snapshot taken
 * after the lock was granted and sees what the publish before it committed; the INSERT ... ON
 * CONFLICT that follows finds conflicting rows through the index, whatever its own snapshot. So a
 * publish is one statement and one round trip, and publishes of one key still take turns. Two
 * publishes of different keys share no row, so publishes never wait for each other in a circle.
 * With a precondition, the lock is taken only when its check yields a row; what runs alongside
 * it (a data-modifying WITH) runs either way. The values are cast to their columns' types, though
 * PostgreSQL 15 and PGlite take them from the INSERT's columns (bench/results/2026-11-27-mutation-publish.md).
 *
 * An immutable version's publish (`immutable`) is still one statement: its values come first as a
 * row of their own (`incoming`), then `versions_stored_content` (migration
 * 20261127000000_immutable_versions) takes the key's lock and reads what is stored under the
 * coordinates, or their kept content; only when that holds the same content is the key taken and
 * the row written, with the stored creation date where there is one. The check thus runs after the
 * lock, as the write does: of two different publishes at once, the second sees the first.
 */
export function publishStatement(
  row: Record<string, unknown>,
  coordinates: string[],
  key: PublishKey,
  latest: boolean,
  precondition?: Precondition,
  immutable?: ImmutableRule,
  audit?: AuditEntry,
): { shape: string; values: unknown[]; build: () => string } {
  const columns = ['uid', ...Object.keys(row)];
  const keyValues = [key.lock, latest, key.projectName, key.groupId, key.artifactId, key.branch, key.version];
  const rowValues = [randomUUID(), ...columns.slice(1).map((c) => row[c])];
  const preconditionValues = [...(precondition?.alongside?.values ?? []), ...(precondition?.check.values ?? [])];
  // The entry's placeholders come last in the text, after the row's (publishWith).
  const auditValues = audit ? entryValues(audit) : [];
  const audited = audit !== undefined;
  const shape = `publish:${precondition?.shape ?? 'unchecked'}:${columns.join(',')}:${coordinates.join(',')}${audited ? ':audited' : ''}`;
  if (immutable) {
    return {
      shape: `${shape}:immutable:${immutable.content.join(',')}`,
      values: [...preconditionValues, ...rowValues, key.lock, ...keyValues, ...auditValues],
      build: () => immutablePublishSql(columns, coordinates, precondition, immutable, audited),
    };
  }
  return { shape, values: [...preconditionValues, ...keyValues, ...rowValues, ...auditValues], build: () => publishSql(columns, coordinates, precondition, audited) };
}

const CASTS: Record<string, string> = { uid: '::uuid', creation_date: '::timestamptz', latest_version: '::boolean' };

/** The steps that run the precondition, and the FROM that makes a step wait for its check. */
function preconditionSteps(precondition: Precondition | undefined): { steps: string[]; fromAllowed: string } {
  return {
    steps: [
      ...(precondition?.alongside ? [`alongside as (${precondition.alongside.sql})`] : []),
      ...(precondition ? [`allowed as (${precondition.check.sql} limit 1)`] : []),
    ],
    fromAllowed: precondition ? ' from allowed' : '',
  };
}

function upsertTail(columns: string[], coordinates: string[]): string {
  const replaced = columns.filter((c) => c !== 'uid' && !coordinates.includes(c));
  const set = (c: string) => (KEPT_COLUMNS.includes(c) ? `${c} = coalesce(versions.${c}, excluded.${c})` : `${c} = excluded.${c}`);
  return `on conflict (${coordinates.join(', ')}) do update set
         ${[...replaced, 'updated_at'].map(set).join(', ')}
       returning uid, (xmax = 0) as created`;
}

/**
 * The statement of its steps and its insert. `audited`: the insert becomes a step of its own
 * (`written`), and the audit entry is written from the check's row once that step wrote the row
 * (a data-modifying WITH runs whether or not the query reads it); the statement answers the row.
 */
function publishWith(steps: string[], insert: string, audited: boolean): string {
  if (!audited) return `with ${steps.join(', ')} ${insert}`;
  // A session's check names no token: its null is text until cast.
  const all = [...steps, `written as (${insert})`, `audited as (${auditFromRowSql(['allowed.user_id', 'allowed.username', 'allowed.token_id::uuid'])} from written, allowed)`];
  return `with ${all.join(', ')} select uid, created from written`;
}

function publishSql(columns: string[], coordinates: string[], precondition: Precondition | undefined, audited: boolean): string {
  const { steps, fromAllowed } = preconditionSteps(precondition);
  steps.push(`key_taken as (select versions_take_key(?, ?, ?, ?, ?, ?, ?)${fromAllowed})`);
  const insert = `insert into versions (${columns.join(', ')}, updated_at)
       select ${columns.map((c) => `?${CASTS[c] ?? ''}`).join(', ')}, now() from key_taken
       ${upsertTail(columns, coordinates)}`;
  return publishWith(steps, insert, audited);
}

function immutablePublishSql(columns: string[], coordinates: string[], precondition: Precondition | undefined, immutable: ImmutableRule, audited: boolean): string {
  const { steps, fromAllowed } = preconditionSteps(precondition);
  const same = immutable.content.map((c) => `s.${c} is not distinct from i.${c}`).join(' and ');
  steps.push(
    `incoming as (select ${columns.map((c) => `?${CASTS[c] ?? '::text'} as ${c}`).join(', ')}${fromAllowed})`,
    // The function's arguments name the incoming row, so that it runs (and locks) only when there is one.
    `stored as (select s.* from incoming i, versions_stored_content(?, i.project_name, i.group_id, i.artifact_id, i.branch, i.version) s)`,
    `key_taken as (select versions_take_key(?, ?, ?, ?, ?, ?, ?), (select creation_date from stored) as stored_date
       from incoming i where not exists (select 1 from stored s where not (${same})))`,
  );
  const values = columns.map((c) => (c === 'creation_date' ? 'coalesce(k.stored_date, i.creation_date)' : `i.${c}`));
  const insert = `insert into versions (${columns.join(', ')}, updated_at)
       select ${values.join(', ')}, now() from incoming i, key_taken k
       ${upsertTail(columns, coordinates)}`;
  return publishWith(steps, insert, audited);
}

/** The first key of named locks (Dialect.tryNamedLock) on PostgreSQL and PGlite. */
const NAMED_LOCK_CLASS = 'repoadmin';

/** Classifies an error of `pg` or PGlite (which report the same SQLSTATE codes). */
export function classifyPostgresError(error: unknown): ErrorClass | undefined {
  const e = error as { code?: unknown; name?: unknown; message?: unknown } | null | undefined;
  if (!e || typeof e !== 'object') return undefined;
  const code = typeof e.code === 'string' ? e.code : '';
  if (code === '23505') return 'conflict';
  if (RETRY_STATES.has(code)) return 'retry';
  if (e.name === 'KnexTimeoutError' || code === CLIENT_TIMEOUT || NETWORK_CODES.has(code)) return 'unavailable';
  if (/^[0-9A-Z]{5}$/.test(code)) return UNAVAILABLE_STATES.test(code) ? 'unavailable' : undefined;
  return typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message) ? 'unavailable' : undefined;
}

/**
 * What PostgreSQL and PGlite do alike; each supplies how it runs a statement. The publish
 * statement goes through the statement cache like the reads.
 */
export function postgresLike(runStatement: Dialect['runStatement']): Dialect {
  const dialect: Dialect = {
    name: 'postgres',
    ...postgresSql,
    runStatement,

    now(db) {
      return db.raw('current_timestamp(3)');
    },

    nowPlus(db, ms) {
      return db.raw("current_timestamp(3) + (? * interval '1 millisecond')", [ms]);
    },

    castWhole: (sql) => `cast(${sql} as bigint)`,

    joinInOrder: 'join',

    lockRowsKeepingKeys(query) {
      query.forNoKeyUpdate();
    },

    // A session advisory lock in the two-key space (apart from the one-key locks of publishes).
    async tryNamedLock(db, connection, name) {
      const [lock] = await db.select(db.raw('pg_try_advisory_lock(hashtext(?), hashtext(?)) as got', [NAMED_LOCK_CLASS, name])).connection(connection);
      return lock?.got === true;
    },

    async releaseNamedLock(db, connection, name) {
      await db.select(db.raw('pg_advisory_unlock(hashtext(?), hashtext(?)) as released', [NAMED_LOCK_CLASS, name])).connection(connection);
    },

    async setVersionChange(trx, change) {
      await trx.raw("select set_config('repoadmin.version_change', ?, true)", [change ?? '']);
    },

    async publishVersionRow(db, row, coordinates, key, latest, precondition, immutable, audit) {
      const { shape, values, build } = publishStatement(row, coordinates, key, latest, precondition, immutable, audit);
      const [stored] = await cachedRows(db, shape, values, build);
      return stored && { uid: String(stored.uid), created: Boolean(stored.created) };
    },

    // A materialized CTE is planned on its own (PostgreSQL 12 and later, and PGlite).
    fenced: (name, query) => `with ${name} as materialized (${query})`,

    async clearLatest(trx, key) {
      // The key's lock is held already: taking it again in the same transaction returns at once.
      await trx.raw('select versions_take_key(?, true, ?, ?, ?, ?, ?)', [key.lock, key.projectName, key.groupId, key.artifactId, key.branch, key.version]);
    },

    transactionWithKeyLock(db, lock, work) {
      // The lock versions_take_key takes (migration 20261123120000_versions_take_key).
      return db.transaction(async (trx) => {
        await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [lock]);
        return work(trx);
      });
    },

    async countUpTo(db, table, key, counter, limit) {
      const rows = await db(table)
        .insert({ ...key, [counter]: 1 })
        .onConflict(Object.keys(key))
        .merge({ [counter]: db.raw(`${table}.${counter} + 1`) })
        .where(`${table}.${counter}`, '<', limit)
        .returning(counter);
      return rows.length > 0;
    },

    async insertIfAbsent(db, table, row) {
      const rows = await db(table).insert(row).onConflict().ignore().returning([db.raw('1 as inserted')]);
      return rows.length > 0;
    },

    async updateAndRead(db: Db, table, where, changes, column) {
      const rows = await db(table).where(where).update(changes).returning(column);
      return (rows[0] as Record<string, unknown> | undefined)?.[column];
    },

    async recordDeliveryOutcomes(trx, outcomes) {
      await cachedRows(trx, 'delivery-outcomes', [JSON.stringify(outcomes)], () => DELIVERY_OUTCOMES);
    },
    numberEvents(trx, last, limit) {
      return cachedRows(trx, 'events:number', [limit, last], () => NUMBER_EVENTS);
    },
  };
  return dialect;
}

/**
 * The events' numbering as one statement of one text, prepared once per connection: the events
 * without a number (events_unsequenced), locked in id order, numbered by their rank. (A select, then
 * an update with a `case` per event, made each batch a statement of its own that knex and `pg`
 * rebuilt and PostgreSQL parsed and planned every time, with two values an event;
 * bench/results/2026-11-29-event-numbering.md.)
 */
const NUMBER_EVENTS = [
  'with next as (select id from events where seq is null order by id limit ? for update skip locked),',
  'numbered as (select id, row_number() over (order by id) as n from next)',
  'update events as e set seq = cast(? as bigint) + numbered.n from numbered where e.id = numbered.id',
  'returning e.id, e.seq, e.type, e.project_name',
].join(' ');

/**
 * The outcomes as one JSON value, read as rows by the database: one statement text whatever the
 * number of outcomes, prepared once per connection. (A `case` per column with two values per row
 * made a batch of 256 a statement of its own, which knex and `pg` rebuilt and PostgreSQL parsed
 * and planned every time: an eighth to a fifth of the CPU of recording a batch, in this process;
 * bench/outbox-statements.ts and docs/benchmarks.md.)
 */
const DELIVERY_OUTCOMES_COLUMNS: Record<keyof DeliveryOutcome, string> = {
  id: 'uuid', status: 'text', lastStatus: 'integer', lastError: 'text', retryInMs: 'bigint', durationMs: 'integer',
};
const DELIVERY_OUTCOMES = [
  'update deliveries as d set status = o.status, attempts = d.attempts + 1, last_status = o."lastStatus", last_error = o."lastError",',
  "last_attempt_at = current_timestamp(3), next_attempt_at = current_timestamp(3) + o.\"retryInMs\" * interval '1 millisecond',",
  'duration_ms = o."durationMs", lease_until = null, lease_token = null, updated_at = current_timestamp(3)',
  `from json_to_recordset(cast(? as json)) as o(${Object.entries(DELIVERY_OUTCOMES_COLUMNS).map(([name, type]) => `"${name}" ${type}`).join(', ')})`,
  'where d.id = o.id',
].join(' ');

/**
 * Through `pg`, a named prepared statement: each connection parses and plans it once, then only
 * binds and runs it. Outside a transaction it goes to a connection of knex's pool straight through
 * the driver (pg-driver.ts, poolStatementRows); in a transaction it goes through knex.raw on the
 * transaction's connection, still named. Either way the client-side bound applies (pg-driver.ts).
 */
export const postgresDialect = postgresLike((db, statement, values) => {
  if (db.isTransaction) {
    const options = statement.name === undefined ? {} : { name: statement.name };
    return db
      .raw(statement.sql, values as Knex.RawBinding[])
      .options(options)
      .then((result: { rows: Record<string, unknown>[] }) => result.rows);
  }
  // Not an async function: it would wrap the driver's promise in one more.
  const text = statement.native;
  return poolStatementRows(db.client as Knex.Client, statement.name === undefined ? { text, values } : { name: statement.name, text, values });
});

function describeConnectionError(error: unknown, config: ServerConfig['db']): string {
  const code = (error as { code?: string }).code;
  const badDatabase = code === '3D000';
  const denied = code === '28P01' || code === '28000';
  const reason =
    networkReason(code) ?? (badDatabase ? 'the database does not exist' : denied ? 'authentication failed' : firstLine(error));
  return connectFailure('PostgreSQL', config, reason, badDatabase ? 'database' : denied ? 'login' : 'address');
}

/** A pool to a PostgreSQL server at `host:port`; nothing is connected until the first statement. */
function postgresPool(config: ServerConfig['db'], host: string, port: number): Knex {
  // Connections dropped after an error that made them useless (dropsConnection) are counted for /metrics.
  const marks = connectionMarks();
  const driver = boundPg(loadDriver(config.driver, config.driverPath), config.statementTimeoutMs + CLIENT_MARGIN_MS, dropsConnection, marks);
  const db = knexFactory({
    client: knexClientWithDriver('pg', driver, marks),
    connection: {
      host,
      port,
      user: config.user,
      password: config.password,
      database: config.database,
      // Connecting (TCP, TLS, start-up, authentication) until the server is ready for a query.
      connectionTimeoutMillis: config.connectTimeoutMs,
      // On the server: a statement running longer is cancelled (57014).
      statement_timeout: config.statementTimeoutMs,
      keepAlive: true,
    },
    // Waiting for a pool connection, which includes opening one: a request never waits longer.
    acquireConnectionTimeout: config.connectTimeoutMs,
    // Errors name the statement without its values (which may be password hashes or tokens).
    compileSqlOnError: false,
    log: QUIET,
    pool: { min: 0, max: 10, validate: marks.usable },
  } as Knex.Config);
  useDialect(db, postgresDialect);
  return db;
}

/** Opens the pool to a PostgreSQL server and checks that it answers. */
export async function openPostgres(config: ServerConfig['db']): Promise<{ db: Knex; description: string }> {
  const db = postgresPool(config, config.host, config.port);
  try {
    await db.raw('select 1');
  } catch (error) {
    await db.destroy();
    throw new AppError('unavailable', describeConnectionError(error, config), { cause: error });
  }
  return { db, description: `PostgreSQL database ${config.database} on ${config.host}:${config.port}` };
}

/**
 * The pool of the read endpoint (--repoadmin_db_read_host/port): same login and database. Not
 * checked at start: a read endpoint that does not answer is skipped (server/db/replica.ts).
 */
export function openPostgresReplica(config: ServerConfig['db'], read: { host: string; port: number }): Knex {
  return postgresPool(config, read.host, read.port);
}

