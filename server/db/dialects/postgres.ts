// PostgreSQL and PGlite: `insert ... on conflict ... returning`, transaction-scoped advisory locks.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db, Dialect, ErrorClass } from './index.js';

/** SQLSTATEs and socket errors that mean the server cannot be reached or is going away. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN',
  '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', '3D000',
]);
/** deadlock_detected, serialization_failure. */
const RETRY_CODES = new Set(['40P01', '40001']);

export const postgresDialect: Dialect = {
  name: 'postgres',
  likeEscape: "escape '\\'",

  /** `xmax = 0` holds for a row this statement inserted, not for one it updated. */
  async upsertVersionRow(db, row, coordinates) {
    const rows = await db('versions')
      .insert({ ...row, uid: randomUUID() })
      .onConflict(coordinates)
      .merge(Object.keys(row))
      .returning(['uid', db.raw('(xmax = 0) as created')]);
    const stored = rows[0] as { uid: string; created: boolean };
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
    const e = error as { code?: string; name?: string; message?: string } | undefined;
    if (!e) return undefined;
    const code = e.code ?? '';
    if (code === '23505') return 'conflict';
    if (RETRY_CODES.has(code)) return 'retry';
    if (UNAVAILABLE_CODES.has(code) || e.name === 'KnexTimeoutError') return 'unavailable';
    if (/Connection terminated|PGlite is closed|Client has encountered a connection error|Unable to acquire a connection/i.test(e.message ?? '')) {
      return 'unavailable';
    }
    return undefined;
  },
};
