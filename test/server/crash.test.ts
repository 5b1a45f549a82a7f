// kill -9 of the server in the middle of a publish load, twice, on each database kind: every publish
// the server acknowledged (200 or 201) is there after the restart, and there is still one latest
// record per key. The server is the built binary; publishes that were cut off may or may not be there.
// On PostgreSQL and MariaDB the test reads the rows from the database itself too, so it knows where
// the server wrote them.
import knexFactory from 'knex';
import { describe, expect, it } from 'vitest';
import type { DbKind } from '../../server/config.js';
import { type TestDatabase, createTestDatabase, dbKinds } from '../helpers/db.js';
import { cleanEnv, embeddedDataDir, startServerProcess } from '../helpers/process.js';

const WORKERS = 8;
const KEYS = 4;
const ADMIN_PASSWORD = 'crash-admin-pw';
/** Start-up after a crash replays the embedded database's WAL: slow on a busy machine. */
const STARTUP_MS = 90_000;

interface Acknowledged {
  uid: string;
  version: string;
  artifactId: string;
}

async function login(url: string): Promise<string> {
  const res = await fetch(`${url}/v1/authentication/generate-token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { token: string }).token;
}

/** The server's settings for the database made for the test on the server a test URL names. */
function databaseEnv(kind: 'postgres' | 'mysql', database: TestDatabase): Record<string, string> {
  const { host, port, user, password } = database.settings;
  return {
    REPO_MAN_DB_JDBC: kind === 'mysql' ? 'mariadb' : 'postgres',
    REPO_MAN_DB_HOST: host,
    REPO_MAN_DB_PORT: String(port),
    REPO_MAN_DB_USER: user,
    REPO_MAN_DB_PASS: password,
    REPO_MAN_DB_DATABASE: database.settings.database,
  };
}

/** The start-up line's database, as the server names it (server/db/connect.ts). */
const EXPECTED_DATABASE: Record<DbKind, RegExp> = {
  pglite: /, database: embedded PGlite at /,
  postgres: /, database: PostgreSQL database (\w+) on /,
  mysql: /, database: (?:MariaDB|MySQL) [\w.]+ database (\w+) on /,
};

/** The uids of the stored versions, read from the database itself. */
async function storedUids(kind: 'postgres' | 'mysql', database: TestDatabase): Promise<Set<string>> {
  const { host, port, user, password } = database.settings;
  const db = knexFactory({
    client: kind === 'mysql' ? 'mysql2' : 'pg',
    connection: { host, port, user, password, database: database.settings.database },
    pool: { min: 0, max: 1 },
  });
  try {
    return new Set((await db('versions').select('uid')).map((row: { uid: string }) => row.uid));
  } finally {
    await db.destroy();
  }
}

/**
 * Publishes from several workers until the server dies: each goes on publishing across the kill
 * until a publish of its own fails. Returns what the server acknowledged and how many publishes
 * the kill cut off (one per worker). A worker whose publish was answered just before the kill
 * publishes again rather than stopping, so the kill always meets publishing under way, however
 * quickly the server answers.
 */
async function publishUntilKilled(url: string, token: string, round: number, kill: () => void): Promise<{ acknowledged: Acknowledged[]; cutOff: number }> {
  const acknowledged: Acknowledged[] = [];
  let cutOff = 0;
  let dead = false;
  const worker = async (w: number) => {
    for (let i = 0; ; i++) {
      const artifactId = `lib-${(w + i) % KEYS}`;
      const version = `${round}.${w}.${i}`;
      try {
        const res = await fetch(`${url}/v1/repositories`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
          body: JSON.stringify({ projectName: 'crash', branch: 'main', artifact: { groupId: 'crash', artifactId, version }, latestVersion: i % 2 === 0 }),
        });
        const body = (await res.json()) as { uid: string };
        if (res.status === 200 || res.status === 201) acknowledged.push({ uid: body.uid, version, artifactId });
        else throw new Error(`publish answered ${res.status}: ${JSON.stringify(body)}`);
      } catch (error) {
        if (!dead) throw error;
        cutOff++;
        return;
      }
    }
  };
  const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
  // Kill once the load is well under way, while requests are in flight.
  while (acknowledged.length < 150) await new Promise((resolve) => setTimeout(resolve, 20));
  dead = true;
  kill();
  await load;
  return { acknowledged, cutOff };
}

describe.each(dbKinds())('kill -9 under publish load on %s', (kind) => {
  it('keeps every acknowledged publish, over two crashes', async () => {
    let database: TestDatabase | undefined;
    const env: Record<string, string> = { REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD, REPO_MAN_BCRYPT_COST: '4', REPO_MAN_LOG_LEVEL: 'warn' };
    if (kind === 'pglite') {
      env.REPO_MAN_DATA_DIR = embeddedDataDir();
    } else {
      database = await createTestDatabase(kind);
      Object.assign(env, databaseEnv(kind, database));
    }
    /** Starts the server and checks from its start-up line that it uses the test's database. */
    const start = async () => {
      const server = await startServerProcess([], cleanEnv(env), STARTUP_MS);
      const named = EXPECTED_DATABASE[kind].exec(server.stderr());
      expect(named, server.stderr()).not.toBeNull();
      if (database) expect(named![1]).toBe(database.settings.database);
      return server;
    };
    try {
      const acknowledged: Acknowledged[] = [];
      for (let round = 1; round <= 2; round++) {
        const server = await start();
        try {
          const token = await login(server.url);
          const killed = await publishUntilKilled(server.url, token, round, () => server.child.kill('SIGKILL'));
          acknowledged.push(...killed.acknowledged);
          // Every worker was publishing when the server went, and it was a kill: no graceful stop.
          expect(killed.cutOff).toBe(WORKERS);
          await server.exited;
          expect(server.child.signalCode).toBe('SIGKILL');
        } finally {
          await server.stop('SIGKILL');
        }
      }

      const server = await start();
      try {
        const missing: string[] = [];
        for (let i = 0; i < acknowledged.length; i += 50) {
          await Promise.all(
            acknowledged.slice(i, i + 50).map(async (a) => {
              const res = await fetch(`${server.url}/v1/repositories/${a.uid}`);
              const body = (await res.json()) as { version?: string };
              if (res.status !== 200 || body.version !== a.version) missing.push(`${a.version} (${res.status})`);
            }),
          );
        }
        expect(missing).toEqual([]);
        if (kind !== 'pglite') {
          const uids = await storedUids(kind, database!);
          expect(acknowledged.filter((a) => !uids.has(a.uid)).map((a) => a.version)).toEqual([]);
        }
        for (let k = 0; k < KEYS; k++) {
          const res = await fetch(`${server.url}/v1/repositories/search`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ groupId: 'crash', artifactId: `lib-${k}`, latestVersion: true }),
          });
          expect(((await res.json()) as { page: { totalElements: number } }).page.totalElements).toBe(1);
        }
        expect(await server.stop()).toBe(0);
      } finally {
        await server.stop('SIGKILL');
      }
    } finally {
      await database?.drop();
    }
  }, 240_000);
});
