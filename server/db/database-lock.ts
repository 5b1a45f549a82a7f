// A lock held across instances for as long as some work takes: the dialect's named lock (a session
// advisory lock on PostgreSQL, GET_LOCK on MariaDB/MySQL). Both belong to one connection, so the lock is
// taken and released on a connection kept aside for it, and goes away with it: an instance that dies
// holding it (kill -9, a lost network) frees it at once.
import type { Knex } from 'knex';
import { dialectOf } from './dialects/index.js';

/** How often a waiting instance asks again; asking instead of waiting keeps clear of statement time limits. */
const POLL_MS = 200;

/**
 * Runs `work` while holding the database-wide lock `name`, waiting for it as long as another
 * instance holds it. `work` uses the pool's other connections as usual.
 */
export async function withDatabaseLock<T>(db: Knex, name: string, work: () => Promise<T>): Promise<T> {
  const dialect = dialectOf(db);
  const connection = await db.client.acquireConnection();
  try {
    while (!(await dialect.tryNamedLock(db, connection, name))) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    try {
      return await work();
    } finally {
      // Should the connection have died, the server has dropped its locks with it.
      await dialect.releaseNamedLock(db, connection, name).catch(() => undefined);
    }
  } finally {
    await db.client.releaseConnection(connection);
  }
}
