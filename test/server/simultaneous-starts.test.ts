// Several instances on one database: three first starts at once, and a first start killed while it
// migrates, on PostgreSQL and MariaDB/MySQL (the built server, as real processes).
import { spawn } from 'node:child_process';
import knexFactory from 'knex';
import { describe, expect, it } from 'vitest';
import type { DbKind } from '../../server/config.js';
import { createTestDatabase, mysqlAvailable, pgAvailable, type TestDatabase } from '../helpers/db.js';
import { databaseEnv, sleep } from '../helpers/instances.js';
import { BIN, cleanEnv, startServerProcess } from '../helpers/process.js';

const ENV = { REPO_MAN_BCRYPT_COST: '4', REPO_MAN_LOG_LEVEL: 'warn' };
const kinds = (['postgres', 'mysql'] as const).filter((kind) => (kind === 'postgres' ? pgAvailable() : mysqlAvailable()));

/** The administrators and signing secrets the database holds. */
async function firstStartRows(database: TestDatabase): Promise<{ admins: number; secrets: number }> {
  const { settings } = database;
  const db = knexFactory({
    client: settings.kind === 'mysql' ? 'mysql2' : 'pg',
    connection: { host: settings.host, port: settings.port, user: settings.user, password: settings.password, database: settings.database },
    pool: { min: 0, max: 1 },
  });
  try {
    const admins = await db('users').where({ role: 'ROLE_ADMIN' }).count({ n: '*' });
    const secrets = await db('settings').where({ key: 'jwt_secret' }).count({ n: '*' });
    return { admins: Number(admins[0]!.n), secrets: Number(secrets[0]!.n) };
  } finally {
    await db.destroy();
  }
}

// Each kind's tests run at the same time as the other kind's (their work is in the servers they start,
// on two different database servers): the file takes about half as long.
describe.concurrent.each(kinds)('first starts on a fresh %s database', (kind: DbKind) => {
  it('three at once, ten times: all up, one administrator, one signing secret', { timeout: 600_000 }, async () => {
    for (let round = 0; round < 10; round++) {
      const database = await createTestDatabase(kind);
      const env = cleanEnv({ ...ENV, ...databaseEnv(database.settings) });
      const started = await Promise.allSettled([0, 1, 2].map(() => startServerProcess([], env, 60_000)));
      try {
        const failures = started.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason));
        expect({ round, failures }).toEqual({ round, failures: [] });
        for (const s of started) {
          const res = await fetch(`${(s as PromiseFulfilledResult<{ url: string }>).value.url}/health/ready`);
          expect(res.status).toBe(200);
        }
        expect(await firstStartRows(database)).toEqual({ admins: 1, secrets: 1 });
      } finally {
        await Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.stop('SIGKILL') : undefined)));
        await database.drop();
      }
    }
  });

  it('a first start killed while migrating (SIGKILL, SIGTERM) is completed by the next start', { timeout: 600_000 }, async () => {
    // Kill points spread over the first start: from before the first statement to after the schema.
    const delays = [150, 300, 450, 600, 800, 1000, 1300, 1700];
    for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
      for (const delay of delays) {
        const database = await createTestDatabase(kind);
        const env = cleanEnv({ ...ENV, ...databaseEnv(database.settings) });
        try {
          const first = spawn(process.execPath, [BIN, 'server', '--port', '0'], { env, stdio: 'ignore' });
          const exited = new Promise((resolve) => first.once('exit', resolve));
          await sleep(delay);
          first.kill(signal);
          await exited;
          const next = await startServerProcess([], env, 60_000);
          try {
            expect((await fetch(`${next.url}/health/ready`)).status).toBe(200);
            expect(await firstStartRows(database)).toEqual({ admins: 1, secrets: 1 });
          } finally {
            await next.stop('SIGKILL');
          }
        } finally {
          await database.drop();
        }
      }
    }
  });
});
