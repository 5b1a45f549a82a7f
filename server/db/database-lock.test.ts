// The database-wide lock: one holder per database, whatever the number of instances; databases of
// one server never wait for each other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase, dbKinds } from '../../test/helpers/db.js';
import { openDatabase } from './connect.js';
import { withDatabaseLock } from './database-lock.js';

type Opened = Awaited<ReturnType<typeof openDatabase>>;

/** A promise and the function that settles it. */
function gate(): { opened: Promise<void>; open(): void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe.each(dbKinds().filter((kind) => kind !== 'pglite'))('the database lock on %s', (kind) => {
  const databases: TestDatabase[] = [];
  const opened: Opened[] = [];
  // Two instances on database A, one on database B, all on one database server.
  let a1: Opened, a2: Opened, b: Opened;

  beforeAll(async () => {
    databases.push(await createTestDatabase(kind), await createTestDatabase(kind));
    for (const database of [databases[0]!, databases[0]!, databases[1]!]) opened.push(await openDatabase(database.settings));
    [a1, a2, b] = opened as [Opened, Opened, Opened];
  });

  afterAll(async () => {
    for (const database of opened) await database.close();
    for (const database of databases) await database.drop();
  });

  it('makes a second instance on the same database wait, and lets one on another database through', async () => {
    const release = gate();
    const held = gate();
    const holder = withDatabaseLock(a1.db, 'schema', async () => {
      held.open();
      await release.opened;
    });
    await held.opened;

    // Another database of the same server: not held up (named locks on MariaDB belong to the server),
    // so it runs while the holder waits (held up, it would wait to the test's time limit).
    expect(await withDatabaseLock(b.db, 'schema', async () => 'ran')).toBe('ran');

    // The same database: waits until the holder lets go. The waiter has asked for the lock and been
    // refused twice (each statement seen on its instance) before the holder lets go.
    const order: string[] = [];
    let asked = 0;
    const asking = gate();
    const count = (query: { sql: string }) => {
      if (/get_lock|pg_try_advisory_lock/.test(query.sql) && ++asked === 2) asking.open();
    };
    a2.db.on('query', count);
    const waiter = withDatabaseLock(a2.db, 'schema', async () => void order.push('second'));
    await asking.opened;
    a2.db.off('query', count);
    order.push('first done');
    release.open();
    await holder;
    await waiter;
    expect(order).toEqual(['first done', 'second']);
  });
});
