// The statements kept per shape, on PostgreSQL, where they are named and prepared on each
// connection: past MAX_SHAPES a new shape must not leave a prepared statement behind per request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase, pgAvailable } from '../../test/helpers/db.js';
import { type Database, openDatabase } from './connect.js';
import { MAX_SHAPES, cachedRows, keptShapes } from './statements.js';

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

  const numbered = (shape: string, n: number) =>
    cachedRows(opened.db, shape, [n], () => 'select cast(? as integer) as n');

  it('prepares a kept shape once, and a shape past the limit never', async () => {
    // The cache belongs to the process: other tests run in it may have kept shapes of their own.
    expect(keptShapes()).toBeLessThan(MAX_SHAPES - 1);
    const [first] = await numbered('shape-0', 7);
    expect(first).toEqual({ n: 7 });
    const once = await preparedOnTheConnection();
    for (let i = 0; i < 5; i++) expect(await numbered('shape-0', i)).toEqual([{ n: i }]);
    expect(await preparedOnTheConnection()).toBe(once);

    const room = MAX_SHAPES - keptShapes();
    for (let shape = 1; shape <= room; shape++) await numbered(`shape-${shape}`, shape);
    expect(keptShapes()).toBe(MAX_SHAPES);
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
