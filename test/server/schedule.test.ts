// Work on a schedule across instances: two servers on one database run a due task once between
// them, and when the one running it dies, the other takes it over once its lease runs out.
import { describe, expect, it } from 'vitest';
import { readLease } from '../../server/db/leases.js';
import { createTestDatabase, dbKinds } from '../helpers/db.js';
import { waitFor } from '../helpers/instances.js';
import { startTestServer } from '../helpers/server.js';

const SCHEDULE = { tickMs: 100, leaseMs: 1_000 };

// Two servers on one database: a database server (the embedded one is one process's).
const kinds = dbKinds().filter((kind) => kind !== 'pglite');

describe.each(kinds.length > 0 ? kinds : (['postgres'] as const))('the scheduler on %s', (kind) => {
  if (kinds.length === 0) {
    it.skip('needs REPOADMIN_TEST_PG_URL or REPOADMIN_TEST_MYSQL_URL', () => {});
    return;
  }
  it('two instances run a due task once per period', async () => {
    const database = await createTestDatabase(kind);
    const a = await startTestServer({ kind, database, schedule: SCHEDULE });
    const b = await startTestServer({ kind, database, schedule: SCHEDULE });
    try {
      const runs: string[] = [];
      for (const [name, server] of [['a', a], ['b', b]] as const) {
        server.scheduler.register({
          name: 'test.once',
          every: 60_000,
          run: async () => {
            runs.push(name);
          },
        });
      }
      await waitFor('a first run', () => runs.length > 0, 10_000, 20);
      // Each instance ticks five more times, after the first run has let go of its lease: no second run.
      await waitFor('the first run let go', async () => (await readLease(a.db, 'test.once'))?.holder === null, 10_000, 20);
      for (let i = 0; i < 5; i++) await Promise.all([a.scheduler.tick(), b.scheduler.tick()]);
      expect(runs).toHaveLength(1);
      const lease = await readLease(a.db, 'test.once');
      expect(lease?.holder).toBeNull();
      expect(lease!.nextRunAt.getTime() - lease!.lastRunAt!.getTime()).toBeGreaterThanOrEqual(59_000);
    } finally {
      await a.close();
      await b.close();
      await database.drop();
    }
  });

  it('another instance takes a task over when the one running it dies', async () => {
    const database = await createTestDatabase(kind);
    const a = await startTestServer({ kind, database, schedule: SCHEDULE });
    const b = await startTestServer({ kind, database, schedule: SCHEDULE });
    let bClosed = false;
    try {
      const started: string[] = [];
      const finished: string[] = [];
      const servers = { a, b };
      for (const [name, server] of Object.entries(servers)) {
        server.scheduler.register({
          name: 'test.takeover',
          every: 60_000,
          run: async (signal) => {
            started.push(name);
            // The first run never ends on its own: its instance dies in the middle of it.
            if (started.length === 1) {
              await new Promise((resolve) => signal.addEventListener('abort', resolve));
              return;
            }
            finished.push(name);
          },
        });
      }
      await waitFor('a first run', () => started.length === 1, 10_000, 20);
      const holder = started[0] as 'a' | 'b';
      const other = holder === 'a' ? 'b' : 'a';
      // While the holder renews its lease, the other instance does not run the task. A renewal sets
      // the lease to the database's time plus 1 s: one that ends a lease later than the first was made
      // after the first had run out, and the other instance ticks after it.
      const first = (await readLease(servers[holder].db, 'test.takeover'))!.leaseUntil!.getTime();
      await waitFor('a renewal after the first lease ran out', async () => {
        const lease = await readLease(servers[holder].db, 'test.takeover');
        return lease!.leaseUntil!.getTime() >= first + SCHEDULE.leaseMs;
      }, 10_000, 20);
      await servers[other].scheduler.tick();
      expect(started).toEqual([holder]);
      // The holder dies: it stops ticking and renewing, without letting go of the task.
      const diedAt = Date.now();
      if (holder === 'b') bClosed = true;
      await servers[holder].close();
      await waitFor('the take-over', () => finished.length === 1, 10_000, 20);
      expect(finished).toEqual([other]);
      // Taken over once the lease (1 s) ran out, at the next tick.
      expect(Date.now() - diedAt).toBeLessThan(1_000 + 2_000);
      // Let go after the run, due again a period later.
      await waitFor('the lease let go', async () => (await readLease(servers[other].db, 'test.takeover'))?.holder === null, 5_000, 20);
    } finally {
      await a.close().catch(() => undefined);
      if (!bClosed) await b.close();
      await database.drop();
    }
  });
});
