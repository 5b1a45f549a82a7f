// A lock held across instances for as long as some work takes: a session advisory lock on
// PostgreSQL, a named lock (GET_LOCK) on MariaDB/MySQL. Both belong to one connection, so the lock is
// taken and released on a connection kept aside for it, and goes away with it: an instance that dies
// holding it (kill -9, a lost network) frees it at once.
import type { Knex } from 'knex';

/** How often a waiting instance asks again; asking instead of waiting keeps clear of statement time limits. */
const POLL_MS = 200;

/** The advisory lock key pair of a name on PostgreSQL (the two-key space, apart from the one-key locks of publishes). */
const PG_CLASS = 'repoadmin';

/**
 * The named lock of `name` on MariaDB/MySQL. Named locks belong to the whole server, not to one
 * database (advisory locks on PostgreSQL do): the database's name is part of it, so instances on
 * other databases of the same server never wait for each other. Hashed to stay within the 64
 * characters a lock name may have.
 */
const MYSQL_LOCK_NAME = "concat('repoadmin.', sha1(concat(database(), char(0), ?)))";

/** True when the lock was taken now. */
async function tryLock(db: Knex, connection: unknown, name: string): Promise<boolean> {
  if (db.client.dialect === 'mysql') {
    const [lock] = await db.select(db.raw(`get_lock(${MYSQL_LOCK_NAME}, 0) as got`, [name])).connection(connection);
    return Number(lock?.got) === 1;
  }
  const [lock] = await db.select(db.raw('pg_try_advisory_lock(hashtext(?), hashtext(?)) as got', [PG_CLASS, name])).connection(connection);
  return lock?.got === true;
}

async function unlock(db: Knex, connection: unknown, name: string): Promise<void> {
  const statement =
    db.client.dialect === 'mysql'
      ? db.raw(`release_lock(${MYSQL_LOCK_NAME}) as released`, [name])
      : db.raw('pg_advisory_unlock(hashtext(?), hashtext(?)) as released', [PG_CLASS, name]);
  await db.select(statement).connection(connection);
}

/**
 * Runs `work` while holding the database-wide lock `name`, waiting for it as long as another
 * instance holds it. `work` uses the pool's other connections as usual.
 */
export async function withDatabaseLock<T>(db: Knex, name: string, work: () => Promise<T>): Promise<T> {
  const connection = await db.client.acquireConnection();
  try {
    while (!(await tryLock(db, connection, name))) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    try {
      return await work();
    } finally {
      // Should the connection have died, the server has dropped its locks with it.
      await unlock(db, connection, name).catch(() => undefined);
    }
  } finally {
    await db.client.releaseConnection(connection);
  }
}
