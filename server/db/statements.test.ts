// The statements kept per shape, on PostgreSQL, where they are named and prepared on each
// connection: past its limit a new shape must not leave a prepared statement behind per request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase, pgAvailable } from '../../test/helpers/db.js';
import { type Database, openDatabase } from './connect.js';
import { statementCache } from './statements.js';

/** A cache of its own, small, so the process's is left as it was for the files run after this one. */
const LIMIT = 8;

describe.runIf(pgAvailable())('cachedRows on PostgreSQL', () => {
  let database: TestDatabase;
  let opened: Database;

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    opened = await openDatabase(database.settings);
  });
  afterAll(async () => {
    await opened?.close();
    await database?.drop();
  });

  /** One query at a time, so the pool keeps one connection and these are its statements. */
  async function preparedOnTheConnection(): Promise<number> {
    const pool = (opened.db.client as { pool: { numUsed(): number; numFree(): number } }).pool;
    expect(pool.numUsed() + pool.numFree()).toBe(1);
    const result = (await opened.db.raw('select count(*)::int as n from pg_prepared_statements')) as { rows: { n: number }[] };
    return result.rows[0]!.n;
  }

  const cache = statementCache(LIMIT, 'repoadmin_test_');
  const numbered = (shape: string, n: number) => cache.rows(opened.db, shape, [n], () => 'select cast(? as integer) as n');

  it('prepares a kept shape once, and a shape past the limit never', async () => {
    const [first] = await numbered('shape-0', 7);
    expect(first).toEqual({ n: 7 });
    const once = await preparedOnTheConnection();
    for (let i = 0; i < 5; i++) expect(await numbered('shape-0', i)).toEqual([{ n: i }]);
    expect(await preparedOnTheConnection()).toBe(once);

    const room = LIMIT - cache.kept();
    for (let shape = 1; shape <= room; shape++) await numbered(`shape-${shape}`, shape);
    expect(cache.kept()).toBe(LIMIT);
    const full = await preparedOnTheConnection();
    expect(full).toBe(once + room);

    // A shape past the limit: answered right, every time, and prepares nothing.
    for (let i = 0; i < 20; i++) expect(await numbered('one-too-many', i)).toEqual([{ n: i }]);
    expect(await preparedOnTheConnection()).toBe(full);
    // The kept ones still run as before.
    expect(await numbered(`shape-${room}`, 3)).toEqual([{ n: 3 }]);
    expect(await preparedOnTheConnection()).toBe(full);
  }, 60_000);
});
