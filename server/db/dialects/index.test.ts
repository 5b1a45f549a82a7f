// The dialects against real servers: what their errors mean, and that deadlocks and lock timeouts
// are retried. PGlite is left out: it runs one connection, so it cannot deadlock.
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, dbKinds, type TestDatabase } from '../../../test/helpers/db.js';
import { openDatabase } from '../connect.js';
import { retryConflicts } from '../faults.js';
import { classifyDriverError } from './errors.js';

const servers = dbKinds().filter((kind) => kind !== 'pglite');

// Without a server there is nothing to run here: say so as a skipped test (REPOADMIN_REQUIRE_PG=1 or
// REPOADMIN_REQUIRE_MYSQL=1 make dbKinds() fail instead).
if (servers.length === 0) it.skip('needs a PostgreSQL or MariaDB/MySQL server (REPOADMIN_TEST_PG_URL, REPOADMIN_TEST_MYSQL_URL)', () => {});

describe.each(servers)('the %s dialect', (kind) => {
  let database: TestDatabase;
  let db: Knex;
  let close: () => Promise<void>;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    const opened = await openDatabase(database.settings);
    db = opened.db;
    close = opened.close;
    await db.schema.createTable('counters', (t) => {
      t.integer('id').primary();
      t.integer('n').notNullable();
    });
  });
  afterAll(async () => {
    await close?.();
    await database?.drop();
  });

  async function reset(): Promise<void> {
    await db('counters').delete();
    await db('counters').insert([{ id: 1, n: 0 }, { id: 2, n: 0 }]);
  }

  it('retries the loser of a deadlock until both transactions are done', async () => {
    await reset();
    let attempts = 0;
    let arrived = 0;
    let bothArrived: () => void = () => {};
    const barrier = new Promise<void>((resolve) => (bothArrived = resolve));
    // Each transaction locks one row, waits until the other has locked the other row, then wants it.
    const crossing = (first: number, second: number) =>
      retryConflicts(() =>
        db.transaction(async (trx) => {
          attempts++;
          await trx('counters').where({ id: first }).increment('n', 1);
          if (++arrived === 2) bothArrived();
          await barrier;
          await trx('counters').where({ id: second }).increment('n', 1);
        }),
      );
    await Promise.all([crossing(1, 2), crossing(2, 1)]);
    expect(attempts).toBe(3);
    expect(await db('counters').orderBy('id').pluck('n')).toEqual([2, 2]);
  });

  // PostgreSQL has no lock wait timeout unless lock_timeout is set; then it is a plain error (55P03).
  // Lock wait timeouts (1205) are MariaDB/MySQL's; PostgreSQL waits for a lock until statement_timeout.
  if (kind === 'mysql') it('retries a statement that waited too long for a lock (1205)', async () => {
    await reset();
    const holder = await db.transaction();
    await holder('counters').where({ id: 1 }).increment('n', 1);
    const released = new Promise<void>((resolve) => setTimeout(() => void holder.commit().then(() => resolve()), 1_500));
    let attempts = 0;
    let firstError: unknown;
    await retryConflicts(() =>
      db.transaction(async (trx) => {
        attempts++;
        await trx.raw('set session innodb_lock_wait_timeout = 1');
        try {
          await trx('counters').where({ id: 1 }).increment('n', 10);
        } catch (error) {
          firstError ??= error;
          throw error;
        }
      }),
    );
    await released;
    expect(classifyDriverError(firstError)).toBe('retry');
    expect((firstError as { errno?: number }).errno).toBe(1205);
    expect(attempts).toBe(2);
    expect(await db('counters').where({ id: 1 }).first()).toMatchObject({ n: 11 });
  });

  it('tells a unique key clash from an unreachable server', async () => {
    await reset();
    const clash = await db('counters').insert({ id: 1, n: 0 }).catch((error: unknown) => error);
    expect(classifyDriverError(clash)).toBe('conflict');
    const gone = await openDatabase({ ...database.settings, host: '127.0.0.1', port: 1 }).catch((error: unknown) => error);
    expect(gone).toMatchObject({ code: 'unavailable' });
    expect(classifyDriverError((gone as { details: { cause: unknown } }).details.cause)).toBe('unavailable');
  });
});
