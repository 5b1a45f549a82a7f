// What the server asks of `mysql2` itself (mysql2-driver.ts), on a real MariaDB/MySQL server: the
// driver folder's module makes the connections, and a statement left unanswered fails at the
// client's bound and its connection is not handed out again.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase, mysqlAvailable } from '../../../test/helpers/db.js';
import { CLIENT_TIMEOUT } from '../client-timeout.js';
import { type Database, openDatabase } from '../connect.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** Connections made by the driver folder's `mysql2` (below), by this test process. */
const made = globalThis as { repoadminFolderMysql2Connections?: number };

/** A driver folder as `npm install mysql2` leaves it, whose `mysql2` counts the connections it makes. */
function driverFolder(): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'repoadmin-mysql2-driver-'));
  fs.mkdirSync(path.join(folder, 'node_modules', 'mysql2'), { recursive: true });
  fs.writeFileSync(
    path.join(folder, 'node_modules', 'mysql2', 'index.js'),
    `const mysql2 = require(${JSON.stringify(path.join(ROOT, 'node_modules', 'mysql2'))});
function createConnection(settings) {
  globalThis.repoadminFolderMysql2Connections = (globalThis.repoadminFolderMysql2Connections ?? 0) + 1;
  return mysql2.createConnection(settings);
}
module.exports = Object.create(mysql2, { createConnection: { value: createConnection, enumerable: true } });
`,
  );
  return folder;
}

/** Lifts the server's own limit on this session's statements (MariaDB's, else MySQL's). */
async function noServerLimit(db: Knex, connection: unknown): Promise<void> {
  try {
    await db.raw('set max_statement_time = 0').connection(connection);
  } catch {
    await db.raw('set max_execution_time = 0').connection(connection);
  }
}

describe.runIf(mysqlAvailable())('the mysql2 driver under knex', () => {
  let database: TestDatabase;
  let opened: Database;
  let db: Knex;
  let folder: string;

  beforeAll(async () => {
    folder = driverFolder();
    database = await createTestDatabase('mysql');
    // The server stops a statement after 1 s; the client waits 1 s more (mysql.ts).
    opened = await openDatabase({ ...database.settings, statementTimeoutMs: 1_000, driverPath: folder });
    db = opened.db;
  });
  afterAll(async () => {
    await opened?.close();
    await database?.drop();
    if (folder) fs.rmSync(folder, { recursive: true, force: true });
  });

  it("opens its connections with the driver folder's module", async () => {
    expect(made.repoadminFolderMysql2Connections).toBeGreaterThan(0);
    const before = made.repoadminFolderMysql2Connections!;
    const connections = await Promise.all([0, 1, 2].map(() => db.client.acquireConnection()));
    await Promise.all(connections.map((c) => db.client.releaseConnection(c)));
    expect(made.repoadminFolderMysql2Connections).toBeGreaterThan(before);
  });

  it("fails a statement the database leaves unanswered at the client's bound, and does not hand its connection out again", async () => {
    const connection = await db.client.acquireConnection();
    // This session no longer stops long statements itself: only the client's bound (2 s) stops this one.
    await noServerLimit(db, connection);
    await db.client.releaseConnection(connection);
    const started = performance.now();
    // The pool hands out the connection released last (tarn's free list is a stack).
    await expect(db.raw('select sleep(5) as slept')).rejects.toMatchObject({ code: CLIENT_TIMEOUT });
    const ms = performance.now() - started;
    expect(ms).toBeGreaterThan(1_900);
    expect(ms).toBeLessThan(3_000);
    // The next statements get other connections, whose server stops them again after 1 s.
    for (let i = 0; i < 3; i++) {
      const again = performance.now();
      await db.raw('select sleep(5) as slept').catch(() => undefined);
      expect(performance.now() - again).toBeLessThan(1_900);
    }
  });
});
