// PostgreSQL and PGlite: `insert ... on conflict ... returning`, transaction-scoped advisory locks.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { CLIENT_TIMEOUT } from '../client-timeout.js';
import type { Db, Dialect, ErrorClass } from './index.js';

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

export const postgresDialect: Dialect = {
  name: 'postgres',
  likeEscape: "escape '\\'",

  /**
   * `xmax = 0` holds for a row this statement inserted, not for one it updated.
   *
   * The statement first takes the transaction-scoped advisory lock of the record's key, so every
   * publish of a key, latest or not, changes that key's rows (records and their summary counts) in
   * turn. Two publishes of different keys share no row, so publishes never wait for each other in
   * a circle: without the lock, two publishes that each created a summary row wanted the other's
   * (a deadlock, 40P01). The values are cast because a SELECT does not take its types from the
   * target columns as VALUES does.
   */
  async upsertVersionRow(db, row, coordinates, lockKey) {
    const columns = ['uid', ...Object.keys(row).filter((c) => c !== 'updated_at')];
    const values = [randomUUID(), ...columns.slice(1).map((c) => row[c])] as Knex.RawBinding[];
    const cast: Record<string, string> = { uid: '::uuid', creation_date: '::timestamptz', latest_version: '::boolean' };
    const replaced = columns.filter((c) => c !== 'uid' && !coordinates.includes(c));
    const result = await db.raw(
      `with key_lock as (select pg_advisory_xact_lock(hashtext(?)))
       insert into versions (${columns.join(', ')}, updated_at)
       select ${columns.map((c) => `?${cast[c] ?? ''}`).join(', ')}, now() from key_lock
       on conflict (${coordinates.join(', ')}) do update set
         ${[...replaced, 'updated_at'].map((c) => `${c} = excluded.${c}`).join(', ')}
       returning uid, (xmax = 0) as created`,
      [lockKey, ...values],
    );
    const stored = (result as { rows: { uid: string; created: boolean }[] }).rows[0]!;
    return { uid: String(stored.uid), created: Boolean(stored.created) };
  },

  transactionWithLock<T>(db: Knex, key: string, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
    return db.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [key]);
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
