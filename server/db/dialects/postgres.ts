// PostgreSQL and PGlite: `insert ... on conflict ... returning`, transaction-scoped advisory locks.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { CLIENT_TIMEOUT } from '../client-timeout.js';
import { scopesAllowing } from '../../../common/schemas/tokens.js';
import type { Statement } from '../statements.js';
import type { Db, Dialect, ErrorClass, PublishCheck, PublishKey } from './index.js';

/**
 * SQLSTATE codes (PostgreSQL, appendix A) of a database that cannot serve us now: connection
 * exceptions (08), insufficient resources (53: too many clients, disk full, out of memory),
 * operator intervention (57: shutdowns, a statement cancelled by statement_timeout), refused
 * logins (28), a database that does not exist (3D000) or does not accept connections (55000
 * "not currently accepting connections"), and a lock not available in time (55P03).
 */
const UNAVAILABLE_STATES = /^(08|53|57|28)|^(3D000|55000|55P03)$/;

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

/** knex's client for the `pg` driver (server/db/connect.ts), which can name its statements. */
interface NamedStatementClient {
  namedStatements?: boolean;
  acquireConnection(): Promise<unknown>;
  releaseConnection(connection: unknown): Promise<unknown>;
  _query(connection: unknown, query: { sql: string; bindings: unknown[]; options: { name: string } }): Promise<{ response: { rows: Record<string, unknown>[] } }>;
}

/** The publish statements by SQL text, with their `$n` form and name, made once each. */
const publishStatements = new Map<string, Statement>();

function preparedPublish(db: Db, sql: string, bindings: unknown[]): Statement {
  let statement = publishStatements.get(sql);
  if (statement === undefined) {
    const native = db.raw(sql, bindings as Knex.RawBinding[]).toSQL().toNative().sql;
    statement = { sql, native, name: `repoadmin_w${publishStatements.size + 1}` };
    publishStatements.set(sql, statement);
  }
  return statement;
}

/** The SQL of publish statements by shape (columns, coordinates, credential check): built once each. */
const publishSql = new Map<string, string>();

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
 * The values are cast because a SELECT does not take its types from the target columns as VALUES
 * does.
 */
export function publishStatement(
  row: Record<string, unknown>,
  coordinates: string[],
  key: PublishKey,
  latest: boolean,
  check?: PublishCheck,
): { sql: string; bindings: unknown[] } {
  const columns = ['uid', ...Object.keys(row).filter((c) => c !== 'updated_at')];
  const shape = `${check?.kind ?? 'unchecked'} ${columns.join(',')} ${coordinates.join(',')}`;
  let sql = publishSql.get(shape);
  if (sql === undefined) {
    sql = publishSqlOf(columns, coordinates, check && CREDENTIAL_CHECKS[check.kind]);
    publishSql.set(shape, sql);
  }
  const keyValues = [key.lock, latest, key.projectName, key.groupId, key.artifactId, key.branch, key.version];
  return { sql, bindings: [...(check ? credentialValues(check) : []), ...keyValues, randomUUID(), ...columns.slice(1).map((c) => row[c])] };
}

function publishSqlOf(columns: string[], coordinates: string[], checked: string | undefined): string {
  const cast: Record<string, string> = { uid: '::uuid', creation_date: '::timestamptz', latest_version: '::boolean' };
  const replaced = columns.filter((c) => c !== 'uid' && !coordinates.includes(c));
  return `with ${checked ? `actor as (${checked}), ` : ''}key_taken as (select versions_take_key(?, ?, ?, ?, ?, ?, ?)${checked ? ' from actor' : ''})
       insert into versions (${columns.join(', ')}, updated_at)
       select ${columns.map((c) => `?${cast[c] ?? ''}`).join(', ')}, now() from key_taken
       on conflict (${coordinates.join(', ')}) do update set
         ${[...replaced, 'updated_at'].map((c) => `${c} = excluded.${c}`).join(', ')}
       returning uid, (xmax = 0) as created`;
}

/**
 * The credential's check as a query that yields one row when it holds: the rules of PublishCheck
 * (dialects/index.ts). With no row, the publish statement takes no lock and writes nothing.
 */
const MAY_PUBLISH = "not u.must_change_password and (u.role = 'ROLE_ADMIN' or u.project_name = ?)";
const CREDENTIAL_CHECKS: Record<PublishCheck['kind'], string> = {
  session: `select 1 from users u where u.id = ?::uuid and u.username = ? and u.token_version = ? and ${MAY_PUBLISH}`,
  project: `select 1 from tokens t join users u on u.id = t.user_id
          where t.token_hash = ? and t.scope in (${scopesAllowing('publish').map((s) => `'${s}'`).join(', ')}) and (t.expires_at is null or t.expires_at > ?::timestamptz)
            and t.last_used_at > ?::timestamptz and ${MAY_PUBLISH}`,
};

/** The values of CREDENTIAL_CHECKS[check.kind], in the order of its placeholders. */
function credentialValues(check: PublishCheck): unknown[] {
  return check.kind === 'session'
    ? [check.userId, check.username, check.tokenVersion, check.projectName]
    : [check.tokenHash, check.now, check.usedSince, check.projectName];
}

/** Runs a publish statement: the stored row's uid and whether it was new, if it wrote one. */
async function runPublish(db: Db, statement: { sql: string; bindings: unknown[] }): Promise<{ uid: string; created: boolean } | undefined> {
  const rows = await postgresDialect.runStatement(db, preparedPublish(db, statement.sql, statement.bindings), statement.bindings);
  const stored = rows[0] as { uid: unknown; created: unknown } | undefined;
  return stored && { uid: String(stored.uid), created: Boolean(stored.created) };
}

export const postgresDialect: Dialect = {
  name: 'postgres',
  likeEscape: "escape '\\'",

  async publishVersionRow(db, row, coordinates, key, latest) {
    return (await runPublish(db, publishStatement(row, coordinates, key, latest)))!;
  },

  publishCheckedVersionRow(db, row, coordinates, key, latest, check) {
    return runPublish(db, publishStatement(row, coordinates, key, latest, check));
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

  /**
   * Through `pg`, a named prepared statement: each connection parses and plans it once, then only
   * binds and runs it. The pool and the client-side timeout are knex's (connect.ts). In a
   * transaction it goes through knex.raw on the transaction's connection, still named; PGlite
   * gets it through knex.raw as it is.
   */
  async runStatement(db, statement, values) {
    const client = db.client as unknown as NamedStatementClient;
    if (!client.namedStatements || db.isTransaction) {
      const query = db.raw(statement.sql, values as Knex.RawBinding[]);
      const result = (await (client.namedStatements ? query.options({ name: statement.name }) : query)) as { rows: Record<string, unknown>[] };
      return result.rows;
    }
    const connection = await client.acquireConnection();
    try {
      const query = await client._query(connection, { sql: statement.native, bindings: values, options: { name: statement.name } });
      return query.response.rows;
    } finally {
      await client.releaseConnection(connection);
    }
  },

  classifyError(error): ErrorClass | undefined {
    const e = error as { code?: unknown; name?: unknown; message?: unknown } | null | undefined;
    if (!e || typeof e !== 'object') return undefined;
    const code = typeof e.code === 'string' ? e.code : '';
    if (code === '23505') return 'conflict';
    if (RETRY_STATES.has(code)) return 'retry';
    if (e.name === 'KnexTimeoutError' || code === CLIENT_TIMEOUT || NETWORK_CODES.has(code)) return 'unavailable';
    if (/^[0-9A-Z]{5}$/.test(code)) return UNAVAILABLE_STATES.test(code) ? 'unavailable' : undefined;
    return typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message) ? 'unavailable' : undefined;
  },
};
