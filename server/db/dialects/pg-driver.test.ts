// What the server asks of `pg` itself (pg-driver.ts), on a real PostgreSQL server: the driver
// folder's module makes the connections, a statement left unanswered fails at the client's bound
// and its connection is not handed out again, and a connection that became useless (a replica's
// read-only refusal, 25006) is dropped and counted.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase, pgAvailable } from '../../../test/helpers/db.js';
import { CLIENT_TIMEOUT } from '../client-timeout.js';
import { isDatabaseUnavailable } from '../faults.js';
import { type Database, openDatabase } from '../connect.js';
import { cachedRows } from '../statements.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** Connections made by the driver folder's `pg` (below), by this test process. */
const made = globalThis as { repoadminFolderPgClients?: number };

/** A driver folder as `npm install pg` leaves it, whose `pg` counts the clients it makes. */
function driverFolder(): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'repoadmin-pg-driver-'));
  fs.mkdirSync(path.join(folder, 'node_modules', 'pg'), { recursive: true });
  fs.writeFileSync(
    path.join(folder, 'node_modules', 'pg', 'index.js'),
    `const pg = require(${JSON.stringify(path.join(ROOT, 'node_modules', 'pg'))});
class Client extends pg.Client {
  constructor(settings) {
    super(settings);
    globalThis.repoadminFolderPgClients = (globalThis.repoadminFolderPgClients ?? 0) + 1;
  }
}
module.exports = { ...pg, Client };
`,
  );
  return folder;
}

const dropped = (db: Knex) => (db.client as { droppedConnections: number }).droppedConnections;

describe.runIf(pgAvailable())('the pg driver under knex', () => {
  let database: TestDatabase;
  let opened: Database;
  let db: Knex;
  let folder: string;

  beforeAll(async () => {
    folder = driverFolder();
    database = await createTestDatabase('postgres');
    // The server cancels a statement after 1 s; the client waits 1 s more (postgres.ts, CLIENT_MARGIN_MS).
    opened = await openDatabase({ ...database.settings, statementTimeoutMs: 1_000, driverPath: folder });
    db = opened.db;
    await db.schema.createTable('drops', (t) => t.integer('n'));
  });
  afterAll(async () => {
    await opened?.close();
    await database?.drop();
    if (folder) fs.rmSync(folder, { recursive: true, force: true });
  });

  it('opens its connections with the driver folder\'s module', async () => {
    expect(made.repoadminFolderPgClients).toBeGreaterThan(0);
    const before = made.repoadminFolderPgClients!;
    const connections = await Promise.all([0, 1, 2].map(() => db.client.acquireConnection()));
    await Promise.all(connections.map((c) => db.client.releaseConnection(c)));
    await Promise.all([0, 1, 2].map(() => db.raw('select pg_sleep(0.05)')));
    expect(made.repoadminFolderPgClients).toBeGreaterThan(before);
  });

  it('fails a statement the database leaves unanswered at the client\'s bound, and does not hand its connection out again', async () => {
    const connection = await db.client.acquireConnection();
    // This session no longer cancels long statements itself: only the client's bound (2 s) stops this one.
    await db.raw('set statement_timeout = 0').connection(connection);
    await db.client.releaseConnection(connection);
    const started = performance.now();
    await expect(cachedRows(db, 'pg-driver-test:sleep', [], () => 'select pg_sleep(5)')).rejects.toMatchObject({ code: CLIENT_TIMEOUT });
    const ms = performance.now() - started;
    expect(ms).toBeGreaterThan(1_900);
    expect(ms).toBeLessThan(3_000);
    // The next statements get other connections, whose server cancels them again (57014).
    for (let i = 0; i < 3; i++) {
      await expect(db.raw('select pg_sleep(5)')).rejects.toMatchObject({ code: '57014' });
    }
    expect(dropped(db)).toBe(0);
  });

  it('drops a connection refused as a replica\'s (25006), counts it, and writes on a new one', async () => {
    const connection = await db.client.acquireConnection();
    await db.raw('set session characteristics as transaction read only').connection(connection);
    await db.client.releaseConnection(connection);
    const before = dropped(db);
    // The pool hands out the free connection, the read-only one.
    await expect(cachedRows(db, 'pg-driver-test:insert', [1], () => 'insert into drops (n) values (?) returning n')).rejects.toMatchObject({ code: '25006' });
    expect(dropped(db)).toBe(before + 1);
    expect(await cachedRows(db, 'pg-driver-test:insert', [2], () => 'insert into drops (n) values (?) returning n')).toEqual([{ n: 2 }]);
    await db('drops').insert({ n: 3 });
    expect(dropped(db)).toBe(before + 1);
    expect(await db('drops').orderBy('n').pluck('n')).toEqual([2, 3]);
  });
  it('fails a statement that finds no connection free in time as knex does (unavailable: a 503), and gives every connection back', async () => {
    // 2 s to open each connection and to wait for a free one: enough on busy cores, and short for the test.
    const small = await openDatabase({ ...database.settings, connectTimeoutMs: 2_000 });
    const held: unknown[] = [];
    const release = () => Promise.all(held.splice(0).map((c) => small.db.client.releaseConnection(c)));
    try {
      const pool = small.db.client.pool as { numUsed(): number };
      for (let i = 0; i < 10; i++) held.push(await small.db.client.acquireConnection());
      const refused = await cachedRows(small.db, 'pg-driver-test:one', [], () => 'select 1 as one').then(
        () => undefined,
        (error: Error) => error,
      );
      await release();
      expect(refused?.name).toBe('KnexTimeoutError');
      expect(isDatabaseUnavailable(refused)).toBe(true);
      const rows = await Promise.all(Array.from({ length: 30 }, () => cachedRows(small.db, 'pg-driver-test:one', [], () => 'select 1 as one')));
      expect(rows.flat()).toEqual(Array.from({ length: 30 }, () => ({ one: 1 })));
      // A statement that fails gives its connection back too.
      await expect(cachedRows(small.db, 'pg-driver-test:bad', [], () => 'select * from no_such_table')).rejects.toMatchObject({ code: '42P01' });
      expect(pool.numUsed()).toBe(0);
    } finally {
      // Held connections would keep close() waiting for them.
      await release();
      await small.close();
    }
  });
});
